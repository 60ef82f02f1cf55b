// attune.MultiHeadAttention (and the ONNX Attention entry points it shares)
// against a naive attention written here from the op's definition, plus
// invalid inputs that must be rejected with InvalidArgument.
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "core/schema/multi_head_attention.h"
#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// The naive definition, in double, on (B, H, T, D) arrays.

struct Problem {
  int64_t batch = 2, q_heads = 2, kv_heads = 2, q_len = 3, new_len = 3, past_len = 0, dim = 4, v_dim = 4;
  std::vector<float> q, k, v, past_k, past_v;  // q [B][Hq][Tq][D]; k, v new keys [B][Hkv][T][D|Dv]
  float scale = 0.0f;                          // 0: 1/√D
  bool causal = false;
  int64_t window = 0;
  float softcap = 0.0f;
  std::function<double(int64_t b, int64_t h, int64_t i, int64_t j)> bias;  // additive; -inf hides
  int64_t total() const { return past_len + new_len; }
};

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(n);
  for (float& x : out) x = dist(gen);
  return out;
}

Problem MakeProblem(int64_t b, int64_t hq, int64_t hkv, int64_t tq, int64_t t, int64_t past, int64_t d, int64_t dv,
                    unsigned seed = 1) {
  Problem p;
  p.batch = b, p.q_heads = hq, p.kv_heads = hkv, p.q_len = tq, p.new_len = t, p.past_len = past, p.dim = d;
  p.v_dim = dv;
  p.q = Random(b * hq * tq * d, seed);
  p.k = Random(b * hkv * t * d, seed + 1);
  p.v = Random(b * hkv * t * dv, seed + 2);
  p.past_k = Random(b * hkv * past * d, seed + 3);
  p.past_v = Random(b * hkv * past * dv, seed + 4);
  return p;
}

// Key j of the full cache (past then new) of batch b, kv head h.
const float* CacheRow(const Problem& p, const std::vector<float>& past, const std::vector<float>& fresh, int64_t dim,
                      int64_t b, int64_t h, int64_t j) {
  if (j < p.past_len) return &past[((b * p.kv_heads + h) * p.past_len + j) * dim];
  return &fresh[((b * p.kv_heads + h) * p.new_len + (j - p.past_len)) * dim];
}

// Y as [B][Hq][Tq][Dv].
std::vector<double> NaiveAttention(const Problem& p) {
  const double scale = p.scale != 0.0f ? p.scale : 1.0 / std::sqrt(static_cast<double>(p.dim));
  const int64_t total = p.total();
  const int64_t offset = total - p.q_len;  // bottom-right
  const int64_t group = p.q_heads / p.kv_heads;
  std::vector<double> y(p.batch * p.q_heads * p.q_len * p.v_dim, 0.0);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < p.q_heads; ++h) {
      for (int64_t i = 0; i < p.q_len; ++i) {
        std::vector<double> s(total);
        for (int64_t j = 0; j < total; ++j) {
          const float* qr = &p.q[((b * p.q_heads + h) * p.q_len + i) * p.dim];
          const float* kr = CacheRow(p, p.past_k, p.k, p.dim, b, h / group, j);
          double dot = 0.0;
          for (int64_t d = 0; d < p.dim; ++d) dot += static_cast<double>(qr[d]) * kr[d];
          s[j] = dot * scale;
          if (p.softcap > 0.0f) s[j] = p.softcap * std::tanh(s[j] / p.softcap);
          if (p.bias) s[j] += p.bias(b, h, i, j);
          if (p.causal && j > i + offset) s[j] = -kInf;
          if (p.window > 0 && j <= i + offset - p.window) s[j] = -kInf;
        }
        double m = -kInf;
        for (double x : s) m = std::max(m, x);
        if (m == -kInf) continue;  // nothing visible: zeros
        double sum = 0.0;
        for (double& x : s) sum += (x = std::exp(x - m));
        for (int64_t j = 0; j < total; ++j) {
          const float* vr = CacheRow(p, p.past_v, p.v, p.v_dim, b, h / group, j);
          for (int64_t d = 0; d < p.v_dim; ++d)
            y[((b * p.q_heads + h) * p.q_len + i) * p.v_dim + d] += s[j] / sum * vr[d];
        }
      }
    }
  }
  return y;
}

// (B, H, T, D) -> (B, T, H·D).
std::vector<float> ToThreeD(const std::vector<float>& x, int64_t b, int64_t h, int64_t t, int64_t d) {
  std::vector<float> out(x.size());
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t ti = 0; ti < t; ++ti)
        for (int64_t di = 0; di < d; ++di)
          out[((bi * t + ti) * h + hi) * d + di] = x[((bi * h + hi) * t + ti) * d + di];
  return out;
}

Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  return *Tensor::FromVector<float>(std::move(shape), values);
}

// ---------------------------------------------------------------------------
// Running the op.

struct Call {
  bool three_d = false;
  Tensor mask;
  bool with_past = false;
  int num_outputs = 1;
  bool set_num_heads = true;
  AttentionBackend backend = AttentionBackend::kAuto;
  Tensor sinks;  // input 7 when given
};

KernelCall MhaCall(const Problem& p, const Call& c) {
  KernelCall call;
  call.op_type = mha::kOpType;
  call.domain = mha::kDomain;
  call.opset = 1;
  if (c.set_num_heads) call.attributes.Set(mha::kNumHeads, p.q_heads);
  if (p.kv_heads != p.q_heads) call.attributes.Set(mha::kKvNumHeads, p.kv_heads);
  if (p.scale != 0.0f) call.attributes.Set(mha::kScale, p.scale);
  if (p.causal) call.attributes.Set(mha::kCausal, int64_t{1});
  if (p.window > 0) call.attributes.Set(mha::kWindow, p.window);
  if (p.softcap > 0.0f) call.attributes.Set(mha::kSoftcap, p.softcap);
  if (c.three_d) {
    call.inputs.push_back(
        Floats({p.batch, p.q_len, p.q_heads * p.dim}, ToThreeD(p.q, p.batch, p.q_heads, p.q_len, p.dim)));
    call.inputs.push_back(
        Floats({p.batch, p.new_len, p.kv_heads * p.dim}, ToThreeD(p.k, p.batch, p.kv_heads, p.new_len, p.dim)));
    call.inputs.push_back(
        Floats({p.batch, p.new_len, p.kv_heads * p.v_dim}, ToThreeD(p.v, p.batch, p.kv_heads, p.new_len, p.v_dim)));
  } else {
    call.inputs.push_back(Floats({p.batch, p.q_heads, p.q_len, p.dim}, p.q));
    call.inputs.push_back(Floats({p.batch, p.kv_heads, p.new_len, p.dim}, p.k));
    call.inputs.push_back(Floats({p.batch, p.kv_heads, p.new_len, p.v_dim}, p.v));
  }
  call.inputs.push_back(c.mask);
  if (c.with_past) {
    call.inputs.push_back(Floats({p.batch, p.kv_heads, p.past_len, p.dim}, p.past_k));
    call.inputs.push_back(Floats({p.batch, p.kv_heads, p.past_len, p.v_dim}, p.past_v));
  }
  if (c.sinks.num_elements() > 0) {
    call.inputs.resize(mha::kInputSinks, Tensor());
    call.inputs.push_back(c.sinks);
  }
  call.num_outputs = c.num_outputs;
  call.options.attention_backend = c.backend;
  call.options.threads = 2;
  return call;
}

// Y from the op, always as [B][Hq][Tq][Dv].
std::vector<float> RunY(const Problem& p, const Call& c, std::vector<Tensor>* all = nullptr) {
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(MhaCall(p, c));
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0];
  std::vector<float> values(y.data<float>(), y.data<float>() + y.num_elements());
  if (all != nullptr) *all = *out;
  if (!c.three_d) {
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{p.batch, p.q_heads, p.q_len, p.v_dim}));
    return values;
  }
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{p.batch, p.q_len, p.q_heads * p.v_dim}));
  std::vector<float> four(values.size());  // (B, T, H·Dv) -> (B, H, T, Dv)
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.q_heads; ++h)
      for (int64_t t = 0; t < p.q_len; ++t)
        for (int64_t d = 0; d < p.v_dim; ++d)
          four[((b * p.q_heads + h) * p.q_len + t) * p.v_dim + d] =
              values[((b * p.q_len + t) * p.q_heads + h) * p.v_dim + d];
  return four;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-5 + 1e-4 * std::fabs(expected[i])) << "element " << i;
  }
}

void ExpectMatchesNaive(const Problem& p, const Call& c) { ExpectNear(RunY(p, c), NaiveAttention(p)); }

// ---------------------------------------------------------------------------
// Results.

TEST(MultiHeadAttentionTest, FourD) { ExpectMatchesNaive(MakeProblem(2, 2, 2, 3, 5, 0, 4, 4), {}); }

TEST(MultiHeadAttentionTest, ThreeD) {
  Call c;
  c.three_d = true;
  ExpectMatchesNaive(MakeProblem(2, 3, 3, 4, 6, 0, 8, 8), c);
}

TEST(MultiHeadAttentionTest, FourDWithoutNumHeadsAttribute) {
  Call c;
  c.set_num_heads = false;
  ExpectMatchesNaive(MakeProblem(1, 2, 2, 3, 3, 0, 4, 4), c);
}

TEST(MultiHeadAttentionTest, DifferentValueHeadSize) {
  Call c;
  ExpectMatchesNaive(MakeProblem(2, 2, 2, 3, 4, 0, 4, 6), c);
  c.three_d = true;
  ExpectMatchesNaive(MakeProblem(2, 2, 2, 3, 4, 0, 4, 6), c);
}

TEST(MultiHeadAttentionTest, GroupedQueryHeads) {
  Call c;
  ExpectMatchesNaive(MakeProblem(2, 6, 2, 3, 5, 0, 4, 4), c);
  c.three_d = true;
  ExpectMatchesNaive(MakeProblem(2, 6, 2, 3, 5, 0, 4, 4), c);
  ExpectMatchesNaive(MakeProblem(1, 4, 1, 2, 3, 0, 4, 4), c);  // multi-query
}

TEST(MultiHeadAttentionTest, ExplicitScale) {
  Problem p = MakeProblem(1, 2, 2, 3, 3, 0, 4, 4);
  p.scale = 0.37f;
  ExpectMatchesNaive(p, {});
}

TEST(MultiHeadAttentionTest, CausalSelfAttention) {
  Problem p = MakeProblem(2, 2, 2, 5, 5, 0, 4, 4);
  p.causal = true;
  ExpectMatchesNaive(p, {});
}

TEST(MultiHeadAttentionTest, CausalIsBottomRightWhenKeysOutnumberQueries) {
  Problem p = MakeProblem(1, 2, 2, 2, 5, 0, 4, 4);
  p.causal = true;
  ExpectMatchesNaive(p, {});
  // The last query sees every key, the first all but the last.
  std::vector<float> y = RunY(p, {});
  Problem open = p;
  open.causal = false;
  std::vector<double> all_keys = NaiveAttention(open);
  for (int64_t d = 0; d < p.v_dim; ++d) EXPECT_NEAR(y[1 * p.v_dim + d], all_keys[1 * p.v_dim + d], 1e-5);
}

TEST(MultiHeadAttentionTest, CausalWithPastAndPresentOutputs) {
  for (bool three_d : {false, true}) {
    Problem p = MakeProblem(2, 4, 2, 3, 3, 5, 4, 6);
    p.causal = true;
    Call c;
    c.three_d = three_d;
    c.with_past = true;
    c.num_outputs = 3;
    std::vector<Tensor> out;
    ExpectNear(RunY(p, c, &out), NaiveAttention(p));
    ASSERT_EQ(out.size(), 3u);
    ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{2, 2, 8, 4}));
    ASSERT_EQ(out[2].shape(), (std::vector<int64_t>{2, 2, 8, 6}));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t j = 0; j < 8; ++j) {
          for (int64_t d = 0; d < 4; ++d)
            ASSERT_EQ(out[1].data<float>()[((b * 2 + h) * 8 + j) * 4 + d], CacheRow(p, p.past_k, p.k, 4, b, h, j)[d]);
          for (int64_t d = 0; d < 6; ++d)
            ASSERT_EQ(out[2].data<float>()[((b * 2 + h) * 8 + j) * 6 + d], CacheRow(p, p.past_v, p.v, 6, b, h, j)[d]);
        }
  }
}

TEST(MultiHeadAttentionTest, DecodeOneTokenWithPast) {
  Problem p = MakeProblem(2, 2, 1, 1, 1, 7, 8, 8);
  p.causal = true;
  Call c;
  c.with_past = true;
  ExpectMatchesNaive(p, c);
}

TEST(MultiHeadAttentionTest, PresentOutputsWithoutPast) {
  Problem p = MakeProblem(1, 2, 2, 3, 3, 0, 4, 4);
  Call c;
  c.three_d = true;
  c.num_outputs = 3;
  std::vector<Tensor> out;
  RunY(p, c, &out);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_EQ(out[1].shape(), (std::vector<int64_t>{1, 2, 3, 4}));  // 3-D K comes back as (B, H, T, D)
  for (size_t i = 0; i < p.k.size(); ++i) ASSERT_EQ(out[1].data<float>()[i], p.k[i]);
  for (size_t i = 0; i < p.v.size(); ++i) ASSERT_EQ(out[2].data<float>()[i], p.v[i]);
}

TEST(MultiHeadAttentionTest, SlidingWindow) {
  Problem p = MakeProblem(1, 2, 2, 6, 6, 0, 4, 4);
  p.causal = true;
  p.window = 2;
  ExpectMatchesNaive(p, {});
  p.causal = false;  // the window alone bounds keys on the left only
  ExpectMatchesNaive(p, {});
  Problem cached = MakeProblem(1, 2, 2, 2, 2, 4, 4, 4);
  cached.causal = true;
  cached.window = 3;
  Call c;
  c.with_past = true;
  ExpectMatchesNaive(cached, c);
}

TEST(MultiHeadAttentionTest, BoolMaskBroadcastOverHeads) {
  Problem p = MakeProblem(2, 2, 2, 3, 4, 0, 4, 4);
  std::vector<int64_t> shape = {2, 1, 3, 4};
  Tensor mask = *Tensor::Create(ElementType::kBool, shape);
  for (int64_t i = 0; i < mask.num_elements(); ++i) mask.data<bool>()[i] = (i * 7 % 5) != 0;
  p.bias = [&](int64_t b, int64_t, int64_t i, int64_t j) {
    return mask.data<bool>()[(b * 3 + i) * 4 + j] ? 0.0 : -kInf;
  };
  Call c;
  c.mask = mask;
  ExpectMatchesNaive(p, c);
}

TEST(MultiHeadAttentionTest, FloatMasks2D3D4D) {
  Problem p = MakeProblem(2, 2, 2, 3, 4, 0, 4, 4);
  const std::vector<float> values = Random(2 * 2 * 3 * 4, 99);
  Call c;
  c.mask = Floats({3, 4}, std::vector<float>(values.begin(), values.begin() + 12));
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return values[i * 4 + j]; };
  ExpectMatchesNaive(p, c);
  c.mask = Floats({2, 3, 4}, std::vector<float>(values.begin(), values.begin() + 24));
  p.bias = [&](int64_t, int64_t h, int64_t i, int64_t j) { return values[(h * 3 + i) * 4 + j]; };
  ExpectMatchesNaive(p, c);
  c.mask = Floats({2, 2, 3, 4}, values);
  p.bias = [&](int64_t b, int64_t h, int64_t i, int64_t j) { return values[((b * 2 + h) * 3 + i) * 4 + j]; };
  ExpectMatchesNaive(p, c);
  c.mask = Floats({2, 1, 1, 4}, std::vector<float>(values.begin(), values.begin() + 8));  // key padding
  p.bias = [&](int64_t b, int64_t, int64_t, int64_t j) { return values[b * 4 + j]; };
  ExpectMatchesNaive(p, c);
  c.mask = Floats({3, 1}, std::vector<float>(values.begin(), values.begin() + 3));  // broadcast over keys
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t) { return values[i]; };
  ExpectMatchesNaive(p, c);
}

TEST(MultiHeadAttentionTest, MaskWithCausalAndPast) {
  Problem p = MakeProblem(1, 2, 2, 2, 2, 3, 4, 4);
  p.causal = true;
  const std::vector<float> values = Random(2 * 5, 7);
  Call c;
  c.with_past = true;
  c.mask = Floats({2, 5}, values);
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return values[i * 5 + j]; };
  ExpectMatchesNaive(p, c);
}

TEST(MultiHeadAttentionTest, SoftcapIsAppliedBeforeTheMask) {
  Problem p = MakeProblem(2, 2, 2, 3, 4, 0, 4, 4, 5);
  p.softcap = 0.3f;
  ExpectMatchesNaive(p, {});
  std::vector<float> values = Random(12, 11);
  values[5] = -std::numeric_limits<float>::infinity();
  Call c;
  c.mask = Floats({3, 4}, values);
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return static_cast<double>(values[i * 4 + j]); };
  ExpectMatchesNaive(p, c);
  p.causal = true;
  ExpectMatchesNaive(p, c);
}

TEST(MultiHeadAttentionTest, FullyMaskedRowGivesZeros) {
  Problem p = MakeProblem(1, 1, 1, 2, 3, 0, 4, 4);
  std::vector<float> values = {0, 0, 0, -INFINITY, -INFINITY, -INFINITY};
  Call c;
  c.mask = Floats({2, 3}, values);
  std::vector<float> y = RunY(p, c);
  for (int64_t d = 0; d < 4; ++d) EXPECT_EQ(y[4 + d], 0.0f);
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return static_cast<double>(values[i * 3 + j]); };
  ExpectNear(y, NaiveAttention(p));
}

TEST(MultiHeadAttentionTest, Float16Inputs) {
  Problem p = MakeProblem(1, 2, 2, 3, 4, 0, 8, 8);
  for (auto* values : {&p.q, &p.k, &p.v})
    for (float& x : *values) x = HalfToFloat(FloatToHalf(x));  // exactly representable
  KernelCall call = MhaCall(p, {});
  for (int i = 0; i < 3; ++i) {
    Tensor half = *Tensor::Create(ElementType::kFloat16, call.inputs[i].shape());
    for (int64_t e = 0; e < half.num_elements(); ++e)
      half.data<Float16>()[e] = FloatToHalf(call.inputs[i].data<float>()[e]);
    call.inputs[i] = half;
  }
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].type(), ElementType::kFloat16);
  const std::vector<double> expected = NaiveAttention(p);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(HalfToFloat((*out)[0].data<Float16>()[i]), expected[i], 1e-3 + 1e-3 * std::fabs(expected[i]));
  }
}

TEST(MultiHeadAttentionTest, EveryBackendGivesTheSameAnswer) {
  Problem p = MakeProblem(2, 4, 2, 3, 3, 4, 8, 8);
  p.causal = true;
  const std::vector<float> values = Random(3 * 7, 3);
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return values[i * 7 + j]; };
  const std::vector<double> expected = NaiveAttention(p);
  for (AttentionBackend backend :
       {AttentionBackend::kAuto, AttentionBackend::kSimd, AttentionBackend::kOneDnn, AttentionBackend::kReference}) {
    for (bool three_d : {false, true}) {
      Call c;
      c.backend = backend;
      c.three_d = three_d;
      c.with_past = true;
      c.mask = Floats({3, 7}, values);
      SCOPED_TRACE(static_cast<int>(backend));
      ExpectNear(RunY(p, c), expected);
    }
  }
}

// ---------------------------------------------------------------------------
// Bad inputs: InvalidArgument (or Unimplemented for what is unsupported), never a crash.

absl::StatusCode CodeOf(const KernelCall& call) { return RunKernel(call).status().code(); }

TEST(MultiHeadAttentionTest, RejectsMismatchedHeadSizes) {
  Problem p = MakeProblem(1, 2, 2, 3, 3, 0, 4, 4);
  KernelCall call = MhaCall(p, {});
  call.inputs[1] = Floats({1, 2, 3, 5}, Random(30, 1));  // K head size 5, Q 4
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
  Call c;
  c.three_d = true;
  call = MhaCall(p, c);
  call.inputs[1] = Floats({1, 3, 10}, Random(30, 1));  // 10 / 2 heads = 5 != 4
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
}

TEST(MultiHeadAttentionTest, RejectsNumHeadsNotDividingHidden) {
  Problem p = MakeProblem(1, 2, 2, 3, 3, 0, 4, 4);
  Call c;
  c.three_d = true;
  KernelCall call = MhaCall(p, c);
  call.attributes.Set(mha::kNumHeads, int64_t{3});  // hidden 8
  call.attributes.Set(mha::kKvNumHeads, int64_t{2});
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
  call = MhaCall(p, c);
  call.attributes.Erase(mha::kNumHeads);  // 3-D needs it
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
}

TEST(MultiHeadAttentionTest, RejectsKvHeadsNotDividingQueryHeads) {
  Problem p = MakeProblem(1, 4, 3, 2, 2, 0, 3, 3);  // 4 query heads, 3 kv heads
  Call c;
  c.three_d = true;
  EXPECT_EQ(CodeOf(MhaCall(p, c)), absl::StatusCode::kInvalidArgument);
  c.three_d = false;
  EXPECT_EQ(CodeOf(MhaCall(p, c)), absl::StatusCode::kInvalidArgument);
}

TEST(MultiHeadAttentionTest, RejectsUnbroadcastableMasks) {
  Problem p = MakeProblem(2, 2, 2, 3, 4, 0, 4, 4);
  for (std::vector<int64_t> shape :
       std::vector<std::vector<int64_t>>{{4, 4}, {3, 5}, {3, 3}, {3, 2, 3, 4}, {3, 3, 4}, {1, 1, 1, 3, 4}, {}}) {
    Call c;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    c.mask = Floats(shape, std::vector<float>(n, 0.0f));
    EXPECT_EQ(CodeOf(MhaCall(p, c)), absl::StatusCode::kInvalidArgument) << ShapeToString(shape);
  }
  Call c;
  c.mask = *Tensor::FromVector<int32_t>({3, 4}, std::vector<int32_t>(12, 1));
  EXPECT_EQ(CodeOf(MhaCall(p, c)), absl::StatusCode::kInvalidArgument);
}

TEST(MultiHeadAttentionTest, RejectsOtherBadInputs) {
  Problem p = MakeProblem(2, 2, 2, 3, 3, 2, 4, 4);
  auto expect_invalid = [](KernelCall call, const char* what) {
    EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument) << what;
  };
  Call c;
  KernelCall call = MhaCall(p, c);
  call.inputs[0] = Floats({2, 12}, Random(24, 1));
  expect_invalid(call, "rank-2 Q");
  call = MhaCall(p, c);
  call.inputs[1] = Floats({1, 2, 3, 4}, Random(24, 1));
  expect_invalid(call, "batch mismatch");
  call = MhaCall(p, c);
  call.inputs[2] = Floats({2, 2, 4, 4}, Random(64, 1));
  expect_invalid(call, "K and V lengths differ");
  call = MhaCall(p, c);
  call.inputs[2] = Floats({2, 1, 3, 4}, Random(24, 1));
  expect_invalid(call, "K and V head counts differ");
  c.with_past = true;
  call = MhaCall(p, c);
  call.inputs.pop_back();
  expect_invalid(call, "past_key without past_value");
  call = MhaCall(p, c);
  call.inputs[4] = Floats({2, 2, 2, 5}, Random(40, 1));
  expect_invalid(call, "past_key head size");
  call = MhaCall(p, c);
  call.inputs[5] = Floats({2, 2, 3, 4}, Random(48, 1));
  expect_invalid(call, "past lengths differ");
  call = MhaCall(p, {});
  call.inputs[1] = *Tensor::FromVector<double>({2, 2, 3, 4}, std::vector<double>(48, 0.0));
  expect_invalid(call, "K type differs from Q");
  call = MhaCall(p, {});
  call.attributes.Set(mha::kCausal, int64_t{2});
  expect_invalid(call, "causal = 2");
  call = MhaCall(p, {});
  call.attributes.Set(mha::kWindow, int64_t{-1});
  expect_invalid(call, "window < 0");
  call = MhaCall(p, {});
  call.attributes.Set(mha::kSoftcap, -1.0f);
  expect_invalid(call, "softcap < 0");
  call = MhaCall(p, {});
  call.attributes.Set(mha::kNumHeads, int64_t{3});
  expect_invalid(call, "4-D Q with 2 heads, num_heads = 3");
  call = MhaCall(p, {});
  call.attributes.Set(mha::kNumHeads, std::string("two"));
  expect_invalid(call, "num_heads of the wrong type");
  call = MhaCall(p, {});
  call.attributes.Set(mha::kMaskedRows, std::string("zero"));
  expect_invalid(call, "masked_rows not one of the schema's names");
  EXPECT_NE(RunKernel(call).status().message().find(R"("zeros", "nan", "uniform" or "fills" (got "zero"))"),
            std::string::npos)
      << RunKernel(call).status();
  call = MhaCall(p, {});
  call.attributes.Set(mha::kKeyPadding, std::string("boolean"));
  expect_invalid(call, "key_padding not one of the schema's names");
  call = MhaCall(p, {});
  call.attributes.Set("heads", int64_t{2});
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kUnimplemented) << "unknown attribute";
  call = MhaCall(p, {});
  call.num_outputs = mha::kNumOutputs + 1;
  expect_invalid(call, "a fifth output");
}

TEST(MultiHeadAttentionTest, EmptyBatchAndEmptyKeys) {
  Problem empty_batch = MakeProblem(0, 2, 2, 3, 3, 0, 4, 4);
  EXPECT_TRUE(RunKernel(MhaCall(empty_batch, {})).ok());
  Problem no_keys = MakeProblem(1, 2, 2, 3, 0, 0, 4, 4);  // every row sees nothing: zeros
  std::vector<float> y = RunY(no_keys, {});
  for (float x : y) EXPECT_EQ(x, 0.0f);
}

// ---------------------------------------------------------------------------
// ONNX Attention through the same implementation: what differs from
// MultiHeadAttention is the causal alignment and the mask padding rule.

KernelCall OnnxCall(const Problem& p, int opset) {
  KernelCall call = MhaCall(p, {});
  call.op_type = "Attention";
  call.domain = "";
  call.opset = opset;
  call.attributes = Attributes();
  if (p.causal) call.attributes.Set("is_causal", int64_t{1});
  return call;
}

TEST(OnnxAttentionTest, CausalWithoutCacheIsTopLeft) {
  Problem p = MakeProblem(1, 2, 2, 2, 5, 0, 4, 4);
  p.causal = true;
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(OnnxCall(p, 23));
  ASSERT_TRUE(out.ok()) << out.status();
  // Query i sees keys 0..i: the same as bottom-right alignment with an
  // explicit mask hiding keys > i and no causal flag.
  p.causal = false;
  p.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return j > i ? -kInf : 0.0; };
  const std::vector<double> expected = NaiveAttention(p);
  const Tensor& y = (*out)[0];
  ExpectNear(std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements()), expected);
}

TEST(OnnxAttentionTest, ShortMaskHidesTheMissingKeys) {
  Problem p = MakeProblem(1, 2, 2, 2, 5, 0, 4, 4);
  KernelCall call = OnnxCall(p, 23);
  const std::vector<float> values = Random(6, 4);
  call.inputs[3] = Floats({2, 3}, values);
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  p.bias = [&](int64_t, int64_t, int64_t i, int64_t j) { return j < 3 ? values[i * 3 + j] : -kInf; };
  const Tensor& y = (*out)[0];
  ExpectNear(std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements()), NaiveAttention(p));
  call.inputs[3] = Floats({2, 6}, Random(12, 4));  // more keys than there are
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
}

TEST(OnnxAttentionTest, NonpadKvSeqlenNeedsOpset24AndValidCounts) {
  Problem p = MakeProblem(2, 2, 2, 2, 4, 0, 4, 4);
  KernelCall call = OnnxCall(p, 23);
  call.inputs.resize(7);
  call.inputs[6] = *Tensor::FromVector<int64_t>({2}, {3, 4});
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
  call.opset = 24;
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  p.bias = [](int64_t b, int64_t, int64_t, int64_t j) { return j >= (b == 0 ? 3 : 4) ? -kInf : 0.0; };
  const Tensor& y = (*out)[0];
  ExpectNear(std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements()), NaiveAttention(p));
  for (std::vector<int64_t> bad : std::vector<std::vector<int64_t>>{{-1, 2}, {2, 5}}) {
    call.inputs[6] = *Tensor::FromVector<int64_t>({2}, bad);
    EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
  }
  call.inputs[6] = *Tensor::FromVector<int64_t>({3}, {1, 2, 3});
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
  call.inputs[6] = *Tensor::FromVector<int32_t>({2}, {1, 2});
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
}

// With nonpad_kv_seqlen and no past, each batch's causal diagonal ends at its
// own last valid key: query i sees keys j <= i + nonpad[b] - q_len.
TEST(OnnxAttentionTest, CausalWithNonpadKvSeqlenIsPerBatchBottomRight) {
  Problem p = MakeProblem(2, 2, 2, 2, 5, 0, 4, 4);
  p.causal = true;
  const int64_t nonpad[2] = {3, 5};
  auto hidden = [&](int64_t b, int64_t i, int64_t j) { return j >= nonpad[b] || j > i + nonpad[b] - p.q_len; };
  KernelCall call = OnnxCall(p, 24);
  call.inputs.resize(7);
  call.inputs[6] = *Tensor::FromVector<int64_t>({2}, {nonpad[0], nonpad[1]});
  p.causal = false;
  p.bias = [&](int64_t b, int64_t, int64_t i, int64_t j) { return hidden(b, i, j) ? -kInf : 0.0; };
  const std::vector<double> expected = NaiveAttention(p);
  for (int outputs : {1, 4}) {  // the fused path, then the materialised one
    call.num_outputs = outputs;
    call.attributes.Set("qk_matmul_output_mode", int64_t{2});
    absl::StatusOr<std::vector<Tensor>> out = RunKernel(call);
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    ExpectNear(std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements()), expected);
    if (outputs == 1) continue;
    const Tensor& qk = (*out)[3];
    ASSERT_EQ(qk.shape(), (std::vector<int64_t>{2, 2, 2, 5}));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 5; ++j) {
            const float s = qk.data<float>()[((b * 2 + h) * 2 + i) * 5 + j];
            EXPECT_EQ(std::isinf(s) && s < 0, hidden(b, i, j)) << b << " " << h << " " << i << " " << j;
          }
  }
}

TEST(OnnxAttentionTest, ScoreOutputModeZeroIsBeforeTheSoftcap) {
  Problem p = MakeProblem(1, 1, 1, 2, 3, 0, 4, 4);
  KernelCall call = OnnxCall(p, 23);
  call.attributes.Set("softcap", 0.5f);
  call.num_outputs = 4;
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(call);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& qk = (*out)[3];
  ASSERT_EQ(qk.shape(), (std::vector<int64_t>{1, 1, 2, 3}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double dot = 0.0;
      for (int64_t d = 0; d < 4; ++d) dot += static_cast<double>(p.q[i * 4 + d]) * p.k[j * 4 + d];
      EXPECT_NEAR(qk.data<float>()[i * 3 + j], dot / 2.0, 1e-6);
    }
  call.attributes.Set("qk_matmul_output_mode", int64_t{4});
  EXPECT_EQ(CodeOf(call), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace attune::testing

namespace attune::testing {
namespace {

// Sinks (input 7): a -inf sink weighs nothing; a sink far above every score
// takes nearly every weight; a sink per head of another count is refused
// with one line naming the input.
TEST(MultiHeadAttentionSinksTest, NegativeInfinitySinksChangeNothing) {
  Problem p = MakeProblem(2, 4, 2, 5, 5, 0, 8, 8);
  p.causal = true;
  Call c;
  const std::vector<float> plain = RunY(p, c);
  c.sinks = Floats({4}, std::vector<float>(4, -INFINITY));
  EXPECT_EQ(RunY(p, c), plain);
}

TEST(MultiHeadAttentionSinksTest, ALargeSinkTakesTheWeights) {
  Problem p = MakeProblem(1, 2, 2, 3, 3, 0, 4, 4);
  Call c;
  c.sinks = Floats({2}, {0.0f, 200.0f});
  const std::vector<float> y = RunY(p, c);
  for (int64_t i = 0; i < 3 * 4; ++i) EXPECT_EQ(y[3 * 4 + i], 0.0f) << "head 1, element " << i;
  for (int64_t i = 0; i < 3 * 4; ++i) EXPECT_NE(y[i], 0.0f) << "head 0, element " << i;
}

TEST(MultiHeadAttentionSinksTest, SinksOfAnotherHeadCountAreRefused) {
  Problem p = MakeProblem(1, 2, 2, 3, 3, 0, 4, 4);
  Call c;
  c.sinks = Floats({3}, {0.0f, 1.0f, 2.0f});
  absl::StatusOr<std::vector<Tensor>> out = RunKernel(MhaCall(p, c));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("input 7 (sinks) must be a float tensor of shape [2]"),
            std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace attune::testing
