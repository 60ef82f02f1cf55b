"""Runs the runnable code blocks of the documentation and checks their shown output.

The convention (docs/reliability.md, "Runnable documentation"):
  - a fenced block whose info string is `sh run` is a shell script (bash -euo pipefail),
    one whose info string is `python run` a Python program;
  - a fenced block with the info string `output` right after it (blank lines between allowed)
    is what the block prints on stdout: compared line by line, runs of spaces counted as one;
    a line `...` stands for any number of lines (at the start, the end or between);
    `output approx` compares the same way with every number standing for any number (timings);
  - any other block (plain, `cpp`, `cmake`, ...) is shown only. Commands that need what a clone
    lacks (ONNX Runtime, PyTorch, ../shared, the network, an installed prefix) stay unmarked and the
    text says so.

Each block runs in a fresh temporary folder holding links to every top-level entry of the source
root, `build` pointing at the build tree, so paths read as from the root of a clone while files a
block writes (out/, trace.json, ...) land in the temporary folder. `attune` is on PATH
(build/tools) and `import attune` works (build/python).

usage: run_doc_blocks.py SOURCE_DIR BINARY_DIR [FILE.md ...]   (default: README.md and docs/*.md)
Exits 0 when every block ran and matched, 1 with the file and line of each failure, 77 (skipped)
when the build has no CLI or Python module (the sanitizer build). With --expect-failure (the test
of the check itself) it exits 0 only when every block of the files given was reported.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

RUNNERS = {"sh run": "sh", "python run": "python"}
OUTPUTS = ("output", "output approx")
NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")
TIMEOUT_S = 300


def blocks(path):
    """Yields (line, kind, text, expected_output or None, output_line) for each runnable block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    fences = []  # (start line index, info, text)
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})(.*)$", lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).strip()
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        fences.append((i, info, "\n".join(lines[i + 1:j]), j))
        i = j + 1
    for n, (start, info, text, end) in enumerate(fences):
        if info in OUTPUTS:
            prev = fences[n - 1] if n > 0 else None
            gap = lines[prev[3] + 1:start] if prev else None
            if prev is None or prev[1] not in RUNNERS or any(g.strip() for g in gap):
                yield (start + 1, "error", "an `output` block that does not follow a runnable block", None, None)
            continue
        if info not in RUNNERS:
            continue
        expected, expected_line = None, None
        if n + 1 < len(fences) and fences[n + 1][1] in OUTPUTS:
            nxt = fences[n + 1]
            if not any(g.strip() for g in lines[end + 1:nxt[0]]):
                expected, expected_line = (nxt[2], nxt[1] == "output approx"), nxt[0] + 1
        yield (start + 1, RUNNERS[info], text, expected, expected_line)


def normalise(line, approx):
    line = re.sub(r"\s+", " ", line).strip()
    return NUMBER.sub("#", line) if approx else line


def output_matches(expected, actual, approx=False):
    """Whether `actual` is `expected` with each `...` line standing for any lines (and, approx,
    each number for any number)."""
    want = [normalise(x, approx) for x in expected.strip("\n").split("\n")]
    got = [normalise(x, approx) for x in actual.rstrip("\n").split("\n")]
    chunks, chunk = [], []
    for w in want:
        if w == "...":
            chunks.append(chunk)
            chunk = []
        else:
            chunk.append(w)
    chunks.append(chunk)
    # chunks[0] anchors at the start, chunks[-1] at the end, the others anywhere in order.
    if len(chunks) == 1:
        return got == chunks[0]
    first, middle, last = chunks[0], chunks[1:-1], chunks[-1]
    if got[:len(first)] != first:
        return False
    pos = len(first)
    for c in middle:
        while pos + len(c) <= len(got) and got[pos:pos + len(c)] != c:
            pos += 1
        if pos + len(c) > len(got):
            return False
        pos += len(c)
    return len(got) - len(last) >= pos and (not last or got[len(got) - len(last):] == last)


def workdir(source, binary):
    d = tempfile.mkdtemp(prefix="attune-docs-")
    for entry in os.listdir(source):
        if entry != "build":
            os.symlink(os.path.join(source, entry), os.path.join(d, entry))
    os.symlink(binary, os.path.join(d, "build"))
    return d


def run_block(kind, text, cwd, env):
    cmd = ["bash", "-euo", "pipefail", "-c", text] if kind == "sh" else [sys.executable, "-c", text]
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"no end after {TIMEOUT_S} s"


def main(argv):
    expect_failure = "--expect-failure" in argv
    argv = [a for a in argv if a != "--expect-failure"]
    if len(argv) < 3:
        print(__doc__)
        return 2
    source, binary = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    files = argv[3:] or [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    cli = os.path.join(binary, "tools", "attune")
    module = os.path.join(binary, "python", "attune")
    if not os.path.exists(cli) or not os.path.isdir(module):
        print(f"SKIPPED: {binary} has no {cli if not os.path.exists(cli) else module} "
              "(a build without the CLI or the Python module, such as the sanitizer build); "
              "the documentation's blocks run in the release build")
        return 77
    env = dict(os.environ)
    # attune first, then the Python running this (the one the module is built for) as python3
    env["PATH"] = os.pathsep.join([os.path.join(binary, "tools"), os.path.dirname(sys.executable), env.get("PATH", "")])
    env["PYTHONPATH"] = os.path.join(binary, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("CLICOLOR_FORCE", None)
    failures, ran, malformed = [], 0, 0
    for path in files:
        name = os.path.relpath(path, source)
        for line, kind, text, expected, expected_line in blocks(path):
            if kind == "error":
                malformed += 1
                failures.append(f"{name}:{line}: {text}")
                continue
            ran += 1
            cwd = workdir(source, binary)
            code, out, err = run_block(kind, text, cwd, env)
            shutil.rmtree(cwd, ignore_errors=True)  # the links only, never what they point at
            if code != 0:
                tail = "\n    ".join((err or out).strip().split("\n")[-8:])
                failures.append(f"{name}:{line}: the {kind} block exited {code}:\n    {tail}")
            elif expected is not None and not output_matches(expected[0], out, expected[1]):
                shown = "\n    ".join(out.rstrip("\n").split("\n")[:40])
                failures.append(f"{name}:{line}: the output differs from the one shown at {name}:{expected_line}; "
                                f"it printed:\n    {shown}")
            else:
                print(f"ok   {name}:{line} ({kind}{', output checked' if expected is not None else ''})")
    for f in failures:
        print("FAIL " + f)
    print(f"{ran} runnable blocks, {len(failures)} failed")
    if expect_failure:  # every block and every misplaced output block must have been reported
        return 0 if failures and len(failures) == ran + malformed else 1
    if ran == 0:
        print("FAIL no runnable block found: the marker is a fence with the info string `sh run` or `python run`")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
