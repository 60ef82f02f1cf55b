// RNN, GRU, LSTM, LinearAttention and CausalConvWithState against references
// written here from ONNX's equations, one time step at a time in double, on
// the cases the backend tests leave out: both directions, layout 1,
// sequence_lens, clip, GRU's linear_before_reset, LSTM's peepholes and
// input_forget, grouped query heads with a per-head decay, a carried
// convolution state; and the one-line refusals of bad inputs.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

using Doubles = std::vector<double>;

std::vector<float> Random(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

void ExpectNear(const Tensor& t, const Doubles& want, double tol = 1e-5) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.data<float>()[i], want[i], tol) << "element " << i;
}

// Gate pre-activations of one direction for one step: W x + Wb + R h + Rb,
// rows g * hidden .. (g + 1) * hidden for gate g.
Doubles Affine(const std::vector<float>& w, const std::vector<float>& r, const std::vector<float>& b, int d, int gates,
               int hidden, int input, const float* x, const Doubles& h, bool with_r = true) {
  Doubles out(gates * hidden);
  for (int g = 0; g < gates * hidden; ++g) {
    double s = b[d * 2 * gates * hidden + g] + (with_r ? b[d * 2 * gates * hidden + gates * hidden + g] : 0);
    for (int i = 0; i < input; ++i) s += w[(d * gates * hidden + g) * input + i] * x[i];
    if (with_r)
      for (int i = 0; i < hidden; ++i) s += r[(d * gates * hidden + g) * hidden + i] * h[i];
    out[g] = s;
  }
  return out;
}

TEST(RecurrentTest, BidirectionalLstmWithPeepholesLengthsAndLayout1) {
  const int seq = 3, batch = 2, input = 3, hidden = 2, dirs = 2, gates = 4;
  const std::vector<float> x = Random(batch * seq * input, 1), w = Random(dirs * gates * hidden * input, 2),
                           r = Random(dirs * gates * hidden * hidden, 3), b = Random(dirs * 2 * gates * hidden, 4),
                           p = Random(dirs * 3 * hidden, 5), h0 = Random(batch * dirs * hidden, 6),
                           c0 = Random(batch * dirs * hidden, 7);
  const std::vector<int32_t> lens = {3, 2};
  const Attributes attrs = Attrs({{"direction", std::string("bidirectional")}, {"hidden_size", int64_t{hidden}},
                                  {"layout", int64_t{1}}, {"clip", 0.5f}});
  auto out = RunOp("LSTM", 22, attrs,
                   {F32({batch, seq, input}, x), F32({dirs, gates * hidden, input}, w),
                    F32({dirs, gates * hidden, hidden}, r), F32({dirs, 2 * gates * hidden}, b), I32({batch}, lens),
                    F32({batch, dirs, hidden}, h0), F32({batch, dirs, hidden}, c0), F32({dirs, 3 * hidden}, p)},
                   3);
  ASSERT_TRUE(out.ok()) << out.status();
  Doubles y(batch * seq * dirs * hidden, 0.0), yh(batch * dirs * hidden), yc(batch * dirs * hidden);
  auto clip = [](double v) { return std::max(-0.5, std::min(0.5, v)); };
  for (int d = 0; d < dirs; ++d)
    for (int n = 0; n < batch; ++n) {
      Doubles h(hidden), c(hidden);
      for (int j = 0; j < hidden; ++j) h[j] = h0[(n * dirs + d) * hidden + j], c[j] = c0[(n * dirs + d) * hidden + j];
      for (int s = 0; s < lens[n]; ++s) {
        const int t = d == 0 ? s : lens[n] - 1 - s;
        const Doubles a = Affine(w, r, b, d, gates, hidden, input, x.data() + (n * seq + t) * input, h);
        for (int j = 0; j < hidden; ++j) {  // gates i o f c; peepholes i o f
          const double i = Sigmoid(clip(a[j] + p[d * 3 * hidden + j] * c[j]));
          const double f = Sigmoid(clip(a[2 * hidden + j] + p[d * 3 * hidden + 2 * hidden + j] * c[j]));
          c[j] = f * c[j] + i * std::tanh(clip(a[3 * hidden + j]));
          const double o = Sigmoid(clip(a[hidden + j] + p[d * 3 * hidden + hidden + j] * c[j]));
          h[j] = o * std::tanh(c[j]);
        }
        for (int j = 0; j < hidden; ++j) y[((n * seq + t) * dirs + d) * hidden + j] = h[j];
      }
      for (int j = 0; j < hidden; ++j) yh[(n * dirs + d) * hidden + j] = h[j], yc[(n * dirs + d) * hidden + j] = c[j];
    }
  EXPECT_EQ((*out)[0].shape(), (Shape{batch, seq, dirs, hidden}));
  ExpectNear((*out)[0], y);
  ExpectNear((*out)[1], yh);
  ExpectNear((*out)[2], yc);
}

TEST(RecurrentTest, ReverseGruBothResetForms) {
  const int seq = 4, batch = 2, input = 3, hidden = 3, gates = 3;
  const std::vector<float> x = Random(seq * batch * input, 11), w = Random(gates * hidden * input, 12),
                           r = Random(gates * hidden * hidden, 13), b = Random(2 * gates * hidden, 14);
  for (int64_t lbr : {0, 1}) {
    auto out = RunOp("GRU", 14,
                     Attrs({{"direction", std::string("reverse")}, {"linear_before_reset", lbr}}),
                     {F32({seq, batch, input}, x), F32({1, gates * hidden, input}, w), F32({1, gates * hidden, hidden}, r),
                      F32({1, 2 * gates * hidden}, b)},
                     2);
    ASSERT_TRUE(out.ok()) << out.status();
    Doubles y(seq * batch * hidden), yh(batch * hidden);
    for (int n = 0; n < batch; ++n) {
      Doubles h(hidden, 0.0);
      for (int t = seq - 1; t >= 0; --t) {
        const float* xt = x.data() + (t * batch + n) * input;
        const Doubles a = Affine(w, r, b, 0, gates, hidden, input, xt, h);
        const Doubles ax = Affine(w, r, b, 0, gates, hidden, input, xt, h, false);  // W x + Wb only
        Doubles next(hidden);
        for (int j = 0; j < hidden; ++j) {
          const double z = Sigmoid(a[j]), rg = Sigmoid(a[hidden + j]);
          double cand;
          if (lbr) {
            double rh = b[gates * hidden + 2 * hidden + j];  // Rbh
            for (int i = 0; i < hidden; ++i) rh += r[(2 * hidden + j) * hidden + i] * h[i];
            cand = std::tanh(ax[2 * hidden + j] + rg * rh);
          } else {
            double rh = b[gates * hidden + 2 * hidden + j];
            for (int i = 0; i < hidden; ++i) {
              const double ri = Sigmoid(a[hidden + i]);
              rh += r[(2 * hidden + j) * hidden + i] * ri * h[i];
            }
            cand = std::tanh(ax[2 * hidden + j] + rh);
          }
          next[j] = (1 - z) * cand + z * h[j];
        }
        h.swap(next);
        for (int j = 0; j < hidden; ++j) y[(t * batch + n) * hidden + j] = h[j];
      }
      for (int j = 0; j < hidden; ++j) yh[n * hidden + j] = h[j];
    }
    ExpectNear((*out)[0], y);
    ExpectNear((*out)[1], yh);
  }
}

TEST(RecurrentTest, RnnWithActivationAndBadInputs) {
  const int seq = 2, batch = 1, input = 2, hidden = 2;
  const std::vector<float> x = Random(seq * batch * input, 21), w = Random(hidden * input, 22),
                           r = Random(hidden * hidden, 23);
  const Tensor xt = F32({seq, batch, input}, x), wt = F32({1, hidden, input}, w), rt = F32({1, hidden, hidden}, r);
  auto out = RunOp("RNN", 22, Attrs({{"activations", std::vector<std::string>{"LeakyRelu"}},
                                     {"activation_alpha", std::vector<float>{0.25f}}}),
                   {xt, wt, rt}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  Doubles h(hidden, 0.0), y;
  for (int t = 0; t < seq; ++t) {
    const Doubles a = Affine(w, r, std::vector<float>(2 * hidden, 0.0f), 0, 1, hidden, input, x.data() + t * input, h);
    for (int j = 0; j < hidden; ++j) h[j] = a[j] >= 0 ? a[j] : 0.25 * a[j];
    y.insert(y.end(), h.begin(), h.end());
  }
  ExpectNear((*out)[0], y);
  ExpectNear((*out)[1], h);
  auto bad_w = RunOp("RNN", 22, {}, {xt, F32({1, hidden, 3}, {1, 2, 3, 4, 5, 6}), rt}, 2);
  ASSERT_FALSE(bad_w.ok());
  EXPECT_TRUE(MessageHas(bad_w.status(), "RNN node 'test_node'") && MessageHas(bad_w.status(), "input W"))
      << bad_w.status();
  auto bad_act = RunOp("RNN", 22, Attrs({{"activations", std::vector<std::string>{"Cube"}}}), {xt, wt, rt}, 2);
  ASSERT_FALSE(bad_act.ok());
  EXPECT_TRUE(MessageHas(bad_act.status(), "Cube")) << bad_act.status();
  auto bad_len = RunOp("RNN", 22, {}, {xt, wt, rt, Tensor(), I32({1}, {5})}, 2);
  ASSERT_FALSE(bad_len.ok());
  EXPECT_TRUE(MessageHas(bad_len.status(), "sequence_lens")) << bad_len.status();
}

TEST(RecurrentTest, LinearAttentionGatedDeltaWithGroupedHeads) {
  const int b = 1, t = 3, hq = 4, hkv = 2, dk = 2, dv = 3;
  const std::vector<float> q = Random(b * t * hq * dk, 31), k = Random(b * t * hkv * dk, 32),
                           v = Random(b * t * hkv * dv, 33), past = Random(b * hkv * dk * dv, 34, 0.1f),
                           decay = Random(b * t * hkv, 35, 0.5f), beta = Random(b * t * hkv, 36);
  const float scale = 0.7f;
  auto out = RunOp("LinearAttention", 27,
                   Attrs({{"q_num_heads", int64_t{hq}}, {"kv_num_heads", int64_t{hkv}}, {"scale", scale}}),
                   {F32({b, t, hq * dk}, q), F32({b, t, hkv * dk}, k), F32({b, t, hkv * dv}, v),
                    F32({b, hkv, dk, dv}, past), F32({b, t, hkv}, decay), F32({b, t, hkv}, beta)},
                   2);
  ASSERT_TRUE(out.ok()) << out.status();
  Doubles y(b * t * hq * dv), state(past.begin(), past.end());
  for (int h = 0; h < hkv; ++h)
    for (int s = 0; s < t; ++s) {
      double* st = state.data() + h * dk * dv;
      const double g = std::exp(decay[s * hkv + h]);
      for (int e = 0; e < dk * dv; ++e) st[e] *= g;
      for (int j = 0; j < dv; ++j) {  // delta rule on the decayed state
        double kv = 0;
        for (int i = 0; i < dk; ++i) kv += st[i * dv + j] * k[(s * hkv + h) * dk + i];
        const double u = beta[s * hkv + h] * (v[(s * hkv + h) * dv + j] - kv);
        for (int i = 0; i < dk; ++i) st[i * dv + j] += k[(s * hkv + h) * dk + i] * u;
      }
      for (int qh = h * 2; qh < h * 2 + 2; ++qh)  // query heads 2h and 2h + 1 read KV head h
        for (int j = 0; j < dv; ++j) {
          double o = 0;
          for (int i = 0; i < dk; ++i) o += q[(s * hq + qh) * dk + i] * st[i * dv + j];
          y[(s * hq + qh) * dv + j] = scale * o;
        }
    }
  ExpectNear((*out)[0], y);
  ExpectNear((*out)[1], state);
  auto missing = RunOp("LinearAttention", 27, Attrs({{"q_num_heads", int64_t{hq}}, {"kv_num_heads", int64_t{hkv}}}),
                       {F32({b, t, hq * dk}, q), F32({b, t, hkv * dk}, k), F32({b, t, hkv * dv}, v)}, 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(MessageHas(missing.status(), "requires input decay")) << missing.status();
  auto heads = RunOp("LinearAttention", 27,
                     Attrs({{"q_num_heads", int64_t{3}}, {"kv_num_heads", int64_t{2}}, {"update_rule", std::string("linear")}}),
                     {F32({b, t, hq * dk}, q), F32({b, t, hkv * dk}, k), F32({b, t, hkv * dv}, v)}, 2);
  ASSERT_FALSE(heads.ok());
  EXPECT_TRUE(MessageHas(heads.status(), "multiple of kv_num_heads")) << heads.status();
}

TEST(RecurrentTest, CausalConvWithStateCarriesItsState) {
  const int batch = 2, channels = 3, length = 4, k = 3;
  const std::vector<float> x = Random(batch * channels * length, 41), w = Random(channels * k, 42),
                           bias = Random(channels, 43), past = Random(batch * channels * (k - 1), 44);
  auto out = RunOp("CausalConvWithState", 27, Attrs({{"activation", std::string("silu")}}),
                   {F32({batch, channels, length}, x), F32({channels, 1, k}, w), F32({channels}, bias),
                    F32({batch, channels, k - 1}, past)},
                   2);
  ASSERT_TRUE(out.ok()) << out.status();
  Doubles y, present;
  for (int n = 0; n < batch; ++n)
    for (int c = 0; c < channels; ++c) {
      Doubles seq(past.begin() + (n * channels + c) * (k - 1), past.begin() + (n * channels + c + 1) * (k - 1));
      seq.insert(seq.end(), x.begin() + (n * channels + c) * length, x.begin() + (n * channels + c + 1) * length);
      for (int l = 0; l < length; ++l) {
        double s = bias[c];
        for (int j = 0; j < k; ++j) s += w[c * k + j] * seq[l + j];
        s = static_cast<float>(s);
        y.push_back(s * Sigmoid(s));
      }
      present.insert(present.end(), seq.end() - (k - 1), seq.end());
    }
  ExpectNear((*out)[0], y);
  ExpectNear((*out)[1], present);
  auto bad = RunOp("CausalConvWithState", 27, {}, {F32({batch, channels, length}, x), F32({channels, 2, 1}, Random(6, 1))}, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "CausalConvWithState node 'test_node': weight")) << bad.status();
}

}  // namespace
}  // namespace attune::testing
