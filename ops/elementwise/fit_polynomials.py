#!/usr/bin/env python3
"""Fits the polynomial coefficients of vector_math_impl.h (needs mpmath).

Each fit is a minimax approximation on the weighted error (Lawson's
iteratively reweighted least squares on Chebyshev nodes, in 40-digit
arithmetic). The coefficients are then rounded to float one at a time,
lowest order first, refitting the remaining ones each time so that they
absorb the rounding. Printed: the error in exact arithmetic with the float
coefficients, and the coefficients.

  fit_polynomials.py exp | log | tanh | erf | erfc
"""
import struct
import sys

import mpmath as mp

mp.mp.dps = 40


def to_float(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


def lawson(target, basis, weight, a, b, points=120, iterations=40):
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (i + 0.5) / points) for i in range(points)]
    ys = [target(x) for x in xs]
    ws = [weight(x) for x in xs]
    lam = [mp.mpf(1) / points] * points
    n = len(basis)
    for _ in range(iterations):
        A = mp.matrix(n, n)
        r = mp.matrix(n, 1)
        for x, y, w, l in zip(xs, ys, ws, lam):
            phi = [f(x) for f in basis]
            for i in range(n):
                r[i] += l * w * w * phi[i] * y
                for j in range(n):
                    A[i, j] += l * w * w * phi[i] * phi[j]
        c = mp.lu_solve(A, r)
        errors = [abs(w * (sum(c[k] * basis[k](x) for k in range(n)) - y)) for x, y, w in zip(xs, ys, ws)]
        total = sum(l * e for l, e in zip(lam, errors))
        lam = [l * e / total for l, e in zip(lam, errors)]
    return [c[k] for k in range(n)]


def max_error(c, target, basis, weight, a, b, samples=2000):
    worst = 0
    for i in range(samples + 1):
        x = a + (b - a) * mp.mpf(i) / samples
        worst = max(worst, abs(weight(x) * (sum(c[k] * basis[k](x) for k in range(len(c))) - target(x))))
    return worst


def fit_rounded(target, basis, weight, a, b):
    fixed = []
    while len(fixed) < len(basis):
        rest = basis[len(fixed):]
        t = lambda x, f=list(fixed): target(x) - sum(f[j] * basis[j](x) for j in range(len(f)))
        fixed.append(to_float(lawson(t, rest, weight, a, b)[0]))
    return fixed, max_error(fixed, target, basis, weight, a, b)


def powers(n, step=1, centre=0):
    return [lambda x, k=k: (x - centre) ** (step * k) for k in range(n)]


FITS = {
    # e^r = 1 + r + r^2 P(r), relative error of e^r.
    'exp': (lambda r: (mp.exp(r) - 1 - r) / r**2 if r else mp.mpf(1) / 2, powers(5),
            lambda r: r**2 / mp.exp(r), -mp.log(2) / 2, mp.log(2) / 2),
    # log1p(f) = f - f^2/2 + f^3 P(f), relative error of log1p.
    'log': (lambda f: (mp.log1p(f) - f + f * f / 2) / f**3 if f else mp.mpf(1) / 3, powers(8),
            lambda f: f**3 / mp.log1p(f) if f else 0, mp.sqrt(0.5) - 1, mp.sqrt(2) - 1),
    # tanh x = x + x^3 P(x^2) on [0, 0.625], relative error of tanh.
    'tanh': (lambda x: (mp.tanh(x) - x) / x**3 if x else -mp.mpf(1) / 3, powers(5, 2),
             lambda x: x**3 / mp.tanh(x) if x else 0, mp.mpf(0), mp.mpf('0.625')),
    # erf x = x + x P(x^2) on [0, 1], relative error of erf.
    'erf': (lambda x: mp.erf(x) / x - 1 if x else 2 / mp.sqrt(mp.pi) - 1, powers(7, 2),
            lambda x: x / mp.erf(x) if x else 1, mp.mpf(0), mp.mpf(1)),
    # erfc a = e^(-a^2) t Q(t - 0.55), t = 1/a, a in [1, 10], relative error of erfc.
    'erfc': (lambda t: mp.erfc(1 / t) * mp.exp(1 / t**2) / t, powers(12, 1, mp.mpf('0.55')),
             lambda t: t / (mp.erfc(1 / t) * mp.exp(1 / t**2)), mp.mpf('0.1'), mp.mpf(1)),
}

if __name__ == '__main__':
    if len(sys.argv) != 2 or sys.argv[1] not in FITS:
        sys.exit(__doc__)
    target, basis, weight, a, b = FITS[sys.argv[1]]
    coefficients, error = fit_rounded(target, basis, weight, a, b)
    print(f'{sys.argv[1]}: max weighted error {mp.nstr(error, 3)}')
    for c in coefficients:
        print(f'  {c:.9e}f')
