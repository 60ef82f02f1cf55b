// Attention sinks in every kernel: the reference, each flash ISA variant the
// CPU has (query blocks of 16, 32 and 64 rows, and the decode path with its
// split and merge), the oneDNN backend (which hands sinks to flash) and the
// materialised rows, against a double-precision loop written here from the
// definition: y = sum_j e^{s_j} v_j / (sum_j e^{s_j} + e^{sink}). Causal,
// window, padding (rows with no visible key), a bias (natural units), a sink
// far above every score, -inf, NaN and +inf sinks; and every thread count
// gives the same bits on each fixed plan.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/attention/attention_materialized.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_reference.h"
#include "ops/attention/kernels/flash_attention.h"
#include "ops/common/cpu_features.h"
#include "tests/attention_kernels/attention_problem.h"

namespace attune::attention::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct SinkCase {
  std::string name;
  ProblemShape shape;
  bool causal = false;
  int64_t window = 0;
  std::vector<int64_t> valid;  // per batch; empty: every key
  bool bias = false;           // random finite bias with some -inf entries
  std::vector<float> sinks;    // per query head
  MaskedRows masked_rows = MaskedRows::kNaN;
};

struct Built {
  std::unique_ptr<AttentionProblem> problem;
  std::vector<float> bias, sinks;
  std::vector<int64_t> valid;
  AttentionArgs args;
};

Built Build(const SinkCase& c, int threads) {
  Built b;
  b.problem = std::make_unique<AttentionProblem>(c.shape);
  b.problem->FillRandom(77, -2.0f, 2.0f);
  b.args = b.problem->Args();
  AttentionArgs& a = b.args;
  a.causal = c.causal;
  a.causal_offset = c.shape.kv_len - c.shape.q_len;
  a.window = c.window;
  a.scale = 1.0f / std::sqrt(static_cast<float>(c.shape.head_dim));
  a.masked_rows = c.masked_rows;
  a.threads = threads;
  b.sinks = c.sinks;
  a.sinks = b.sinks.data();
  if (!c.valid.empty()) {
    b.valid = c.valid;
    a.kv_valid_len = b.valid.data();
  }
  if (c.bias) {
    const ProblemShape& s = c.shape;
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    b.bias.resize(s.batch * s.q_heads * s.q_len * s.kv_len);
    for (size_t i = 0; i < b.bias.size(); ++i) b.bias[i] = i % 7 == 3 ? -kInf : dist(gen);
    a.bias.data = b.bias.data();
    a.bias.stride_batch = s.q_heads * s.q_len * s.kv_len;
    a.bias.stride_head = s.q_len * s.kv_len;
    a.bias.stride_seq = s.kv_len;
  }
  return b;
}

// The definition, in double: the visible keys' scores and the sink share one
// softmax, the sink weights no value. A row with no visible key gives its
// sink every weight (zeros) when the sink is finite, NaN otherwise (as the
// subgraph's softmax over -inf scores and that sink).
std::vector<double> Expected(const SinkCase& c) {
  Built b = Build(c, 1);
  const AttentionArgs& a = b.args;
  AttentionProblem& p = *b.problem;
  const ProblemShape& s = c.shape;
  std::vector<double> y(s.batch * s.q_heads * s.q_len * s.v_head_dim);
  const int64_t group = s.q_heads / s.kv_heads;
  for (int64_t bi = 0; bi < s.batch; ++bi)
    for (int64_t h = 0; h < s.q_heads; ++h)
      for (int64_t i = 0; i < s.q_len; ++i) {
        std::vector<double> score(s.kv_len, -INFINITY);
        double top = c.sinks[h];
        for (int64_t j = 0; j < s.kv_len; ++j) {
          const int64_t last = i + a.causal_offset;
          if ((c.causal && j > last) || (c.window > 0 && j <= last - c.window)) continue;
          if (!c.valid.empty() && j >= c.valid[bi]) continue;
          double dot = 0.0;
          for (int64_t d = 0; d < s.head_dim; ++d) dot += double(p.q(bi, h, i, d)) * p.k(bi, h / group, j, d);
          double sc = dot * a.scale;
          if (c.bias) sc = float(sc) + b.bias[((bi * s.q_heads + h) * s.q_len + i) * s.kv_len + j];
          score[j] = sc;
          top = std::max(top, sc);
        }
        const double sink = c.sinks[h];
        const bool nan_sink = std::isnan(sink) || sink == INFINITY;
        double sum = std::exp(sink - top);
        for (double sc : score) sum += std::exp(sc - top);
        for (int64_t d = 0; d < s.v_head_dim; ++d) {
          double acc = 0.0;
          for (int64_t j = 0; j < s.kv_len; ++j) acc += std::exp(score[j] - top) * p.v(bi, h / group, j, d);
          double out = nan_sink || top == -INFINITY ? NAN : acc / sum;
          // Y's element in the problem's layout, as the kernels write it.
          const int64_t at = s.layout == Layout::kBHTD ? ((bi * s.q_heads + h) * s.q_len + i) * s.v_head_dim + d
                                                       : ((bi * s.q_len + i) * s.q_heads + h) * s.v_head_dim + d;
          y[at] = out;
        }
      }
  return y;
}

std::vector<SinkCase> Cases() {
  std::vector<SinkCase> out;
  ProblemShape gqa{2, 4, 2, 37, 37, 16, 16, Layout::kBTHD};
  const std::vector<float> sinks = {0.5f, 30.0f, -kInf, -1.5f};  // one above every score, one that weighs nothing
  out.push_back({"causal", gqa, true, 0, {}, false, sinks});
  out.push_back({"window_padding", gqa, true, 5, {37, 20}, false, sinks});
  // Batch 1 has no key at all: every row of it is hidden.
  out.push_back({"no_keys_in_a_batch", gqa, true, 0, {37, 0}, false, sinks});
  out.push_back({"bias", gqa, true, 0, {}, true, sinks});
  out.push_back({"full_long_keys", ProblemShape{1, 4, 4, 70, 150, 16, 16, Layout::kBHTD}, false, 0, {}, false,
                 {2.0f, -3.0f, 0.0f, 9.0f}});
  ProblemShape decode{2, 4, 1, 2, 300, 32, 32, Layout::kBTHD};
  out.push_back({"decode", decode, true, 0, {300, 120}, false, sinks});
  out.push_back({"decode_window_bias", decode, true, 64, {}, true, sinks});
  out.push_back({"nan_and_inf_sinks", gqa, true, 0, {}, false, {kNaN, kInf, 1.0f, -kInf}});
  return out;
}

struct KernelRun {
  std::string name;
  std::optional<Isa> isa;  // flash with this ISA; none: the named non-flash path
  FlashOverrides overrides;
};

std::vector<KernelRun> Runs() {
  std::vector<KernelRun> runs = {{"reference", std::nullopt, {}}, {"materialized", std::nullopt, {}},
                           {"onednn", std::nullopt, {}}};
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    for (int64_t bq : {16, 32, 64}) {
      FlashOverrides o;
      o.block_q = bq;
      o.block_k = 48;
      o.path = FlashOverrides::Path::kQueryBlocks;
      runs.push_back({std::string(IsaName(isa)) + "_bq" + std::to_string(bq), isa, o});
    }
    FlashOverrides decode;
    decode.path = FlashOverrides::Path::kDecode;
    runs.push_back({std::string(IsaName(isa)) + "_decode", isa, decode});
  }
  return runs;
}

std::vector<float> RunOnce(const SinkCase& c, const KernelRun& r, int threads) {
  Built b = Build(c, threads);
  absl::Status status;
  if (r.isa) {
    SetForcedIsa(*r.isa);
    SetFlashOverrides(r.overrides);
    status = RunFlashAttention(b.args);
    SetFlashOverrides(FlashOverrides{});
    SetForcedIsa(std::nullopt);
  } else if (r.name == "reference") {
    status = RunAttention(b.args, AttentionBackend::kReference);
  } else if (r.name == "materialized") {
    status = RunMaterializedAttention(b.args, nullptr, QkOutputMode::kScaled);
  } else {
    status = RunAttention(b.args, AttentionBackend::kOneDnn);
  }
  EXPECT_TRUE(status.ok()) << status;
  return b.problem->y_buffer();
}

class SinkKernelTest : public ::testing::TestWithParam<SinkCase> {};

TEST_P(SinkKernelTest, EveryKernelMatchesTheDefinitionAndEveryThreadCountTheSameBits) {
  const SinkCase& c = GetParam();
  const std::vector<double> want = Expected(c);
  for (const KernelRun& r : Runs()) {
    if (r.isa && !IsaSupported(*r.isa)) continue;
    const std::vector<float> got = RunOnce(c, r, 1);
    ASSERT_EQ(got.size(), want.size());
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << r.name << " element " << i << " is " << got[i] << ", want NaN";
        continue;
      }
      worst = std::max(worst, std::fabs(got[i] - want[i]));
    }
    EXPECT_LE(worst, 1e-5) << r.name;
    // The oneDNN backend hands sinks to flash's automatic plan, whose query
    // block size follows the thread count: the fixed plans above promise the bits.
    if (r.name == "onednn") continue;
    for (int threads : {2, 3, 4}) {
      const std::vector<float> again = RunOnce(c, r, threads);
      EXPECT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(float)))
          << r.name << " differs at " << threads << " threads";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sinks, SinkKernelTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<SinkCase>& info) { return info.param.name; });

}  // namespace
}  // namespace attune::attention::testing
