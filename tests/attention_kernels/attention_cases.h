// The attention test cases every implementation is swept over, and a helper
// that builds a case's inputs deterministically.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ops/attention/kernels/attention_args.h"
#include "tests/attention_kernels/attention_problem.h"

namespace attune::attention::testing {

// kPerHeadKeys: one row per head shared by the batch and the queries (ALiBi's (1, H, 1, S)).
enum class BiasKind { kNone, kFull, kSharedAcrossBatchAndHeads, kKeyPadding, kPerHeadKeys };

struct AttentionCase {
  std::string name;
  ProblemShape shape;
  bool causal = false;
  int64_t causal_offset = 0;
  int64_t window = 0;
  float scale = 0.0f;  // 0: 1 / sqrt(head_dim)
  float softcap = 0.0f;
  BiasKind bias = BiasKind::kNone;
  float bias_neg_inf_fraction = 0.0f;
  /// The value of hidden bias entries (-inf, or a finite fill such as finfo.min).
  float bias_hidden_value = -std::numeric_limits<float>::infinity();
  /// > 0: every bias row i with i % period == 0 hides all its keys.
  int64_t bias_hidden_row_period = 0;
  /// Bias rows per query: NaN at every key the causal part hides, which no
  /// implementation may let reach the row (a fused Where replaced it).
  bool bias_nan_where_causal_hides = false;
  MaskedRows masked_rows = MaskedRows::kZeros;
  std::vector<int64_t> kv_valid_len;  // empty: none
  bool heavy = false;  // long sequences: only the default configuration of each path
};

/// A case's buffers (inputs seeded from the case index) and its args.
struct BuiltCase {
  std::unique_ptr<AttentionProblem> problem;
  std::vector<float> bias;
  std::vector<int64_t> valid;
  AttentionArgs args;
};

inline BuiltCase BuildCase(const AttentionCase& c, uint32_t seed, int threads) {
  BuiltCase built;
  built.problem = std::make_unique<AttentionProblem>(c.shape);
  built.problem->FillRandom(seed);
  AttentionArgs& a = built.args;
  a = built.problem->Args();
  a.causal = c.causal;
  a.causal_offset = c.causal_offset;
  a.window = c.window;
  a.scale = c.scale != 0.0f ? c.scale : 1.0f / std::sqrt(static_cast<float>(c.shape.head_dim));
  a.softcap = c.softcap;
  a.masked_rows = c.masked_rows;
  a.threads = threads;
  const ProblemShape& s = c.shape;
  if (c.bias != BiasKind::kNone) {
    std::mt19937 gen(seed * 7919u + 1u);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::uniform_real_distribution<float> coin(0.0f, 1.0f);
    const bool per_head = c.bias == BiasKind::kPerHeadKeys;
    const int64_t batches = c.bias == BiasKind::kSharedAcrossBatchAndHeads || per_head ? 1 : s.batch;
    const int64_t heads = c.bias == BiasKind::kFull || per_head ? s.q_heads : 1;
    const int64_t rows = c.bias == BiasKind::kKeyPadding || per_head ? 1 : s.q_len;
    built.bias.resize(batches * heads * rows * s.kv_len);
    for (size_t at = 0; at < built.bias.size(); ++at) {
      const int64_t row = static_cast<int64_t>(at) / s.kv_len % rows;
      const bool row_hidden = c.bias_hidden_row_period > 0 && row % c.bias_hidden_row_period == 0;
      built.bias[at] = row_hidden || coin(gen) < c.bias_neg_inf_fraction ? c.bias_hidden_value : dist(gen);
      const int64_t key = static_cast<int64_t>(at) % s.kv_len;
      if (c.bias_nan_where_causal_hides && rows == s.q_len && key > row + c.causal_offset)
        built.bias[at] = std::numeric_limits<float>::quiet_NaN();
    }
    a.bias.data = built.bias.data();
    a.bias.stride_seq = rows == 1 ? 0 : s.kv_len;
    a.bias.stride_head = heads == 1 ? 0 : rows * s.kv_len;
    a.bias.stride_batch = batches == 1 ? 0 : heads * rows * s.kv_len;
  }
  if (!c.kv_valid_len.empty()) {
    built.valid = c.kv_valid_len;
    a.kv_valid_len = built.valid.data();
  }
  return built;
}

inline std::vector<AttentionCase> AllAttentionCases() {
  std::vector<AttentionCase> cases;
  auto shape = [](int64_t batch, int64_t heads, int64_t kv_heads, int64_t q_len, int64_t kv_len, int64_t dim,
                  int64_t v_dim, Layout layout) {
    ProblemShape s;
    s.batch = batch;
    s.q_heads = heads;
    s.kv_heads = kv_heads;
    s.q_len = q_len;
    s.kv_len = kv_len;
    s.head_dim = dim;
    s.v_head_dim = v_dim;
    s.layout = layout;
    return s;
  };
  // Self-attention lengths around the block edges, causal and not, both layouts.
  for (int64_t t : {1, 2, 3, 17, 63, 64, 65, 255, 256, 257, 1000}) {
    for (bool causal : {false, true}) {
      AttentionCase c;
      c.name = "T" + std::to_string(t) + (causal ? "_causal" : "_full");
      const Layout layout = (t % 2 == 0) ? Layout::kBHTD : Layout::kBTHD;
      c.shape = shape(t >= 1000 ? 1 : 2, 2, 2, t, t, 64, 64, layout);
      c.causal = causal;
      c.heavy = t >= 1000;
      cases.push_back(c);
    }
  }
  {
    AttentionCase c;
    c.name = "T4096_causal_1head";
    c.shape = shape(1, 1, 1, 4096, 4096, 64, 64, Layout::kBHTD);
    c.causal = true;
    c.heavy = true;
    cases.push_back(c);
  }
  // KV cache: q_len != kv_len, bottom-right causal alignment (offset = past).
  for (auto [q, kv] : {std::pair<int64_t, int64_t>{1, 1000}, {2, 300}, {3, 257}, {4, 65}, {5, 300}, {70, 200},
                       {64, 513}, {130, 131}}) {
    AttentionCase c;
    c.name = "past_q" + std::to_string(q) + "_kv" + std::to_string(kv);
    c.shape = shape(2, 4, 2, q, kv, 64, 64, q % 2 ? Layout::kBTHD : Layout::kBHTD);
    c.causal = true;
    c.causal_offset = kv - q;
    cases.push_back(c);
  }
  // Cross attention (no causal), q_len != kv_len.
  {
    AttentionCase c;
    c.name = "cross_q33_kv77";
    c.shape = shape(2, 3, 3, 33, 77, 32, 32, Layout::kBTHD);
    cases.push_back(c);
  }
  // Head dims, with v_head_dim != head_dim too.
  for (auto [d, dv] : {std::pair<int64_t, int64_t>{32, 32}, {80, 80}, {128, 128}, {80, 64}, {32, 48}, {40, 24}}) {
    for (int64_t t : {7, 129}) {
      AttentionCase c;
      c.name = "dim" + std::to_string(d) + "_v" + std::to_string(dv) + "_T" + std::to_string(t);
      c.shape = shape(1, 3, 3, t, t, d, dv, t == 7 ? Layout::kBTHD : Layout::kBHTD);
      c.causal = true;
      cases.push_back(c);
    }
  }
  // Sliding windows.
  for (int64_t w : {1, 16, 100}) {
    AttentionCase c;
    c.name = "window" + std::to_string(w);
    c.shape = shape(1, 2, 2, 300, 300, 64, 64, Layout::kBHTD);
    c.causal = true;
    c.window = w;
    cases.push_back(c);
  }
  {
    AttentionCase c;
    c.name = "window40_past";
    c.shape = shape(1, 2, 1, 3, 500, 64, 64, Layout::kBTHD);
    c.causal = true;
    c.causal_offset = 497;
    c.window = 40;
    cases.push_back(c);
  }
  // GQA ratios 1, 2, 4, 12.
  for (int64_t kv_heads : {12, 6, 3, 1}) {
    for (int64_t q_len : {65, 1}) {
      AttentionCase c;
      c.name = "gqa12x" + std::to_string(kv_heads) + "_q" + std::to_string(q_len);
      c.shape = shape(1, 12, kv_heads, q_len, 97, 64, 64, Layout::kBTHD);
      c.causal = true;
      c.causal_offset = 97 - q_len;
      cases.push_back(c);
    }
  }
  // Bias broadcasts, with and without -inf entries.
  for (BiasKind kind : {BiasKind::kFull, BiasKind::kSharedAcrossBatchAndHeads, BiasKind::kKeyPadding}) {
    for (float neg_inf : {0.0f, 0.3f}) {
      for (int64_t q_len : {70, 2}) {
        AttentionCase c;
        c.name = std::string("bias") +
                 (kind == BiasKind::kFull ? "Full" : kind == BiasKind::kKeyPadding ? "KeyPad" : "Shared") +
                 (neg_inf > 0 ? "_neginf" : "") + "_q" + std::to_string(q_len);
        c.shape = shape(2, 2, 2, q_len, 213, 64, 64, Layout::kBHTD);
        c.bias = kind;
        c.bias_neg_inf_fraction = neg_inf;
        c.causal = neg_inf > 0;
        c.causal_offset = 213 - q_len;
        cases.push_back(c);
      }
    }
  }
  // A position bias (ALiBi's one row per head) with the causal part and
  // trailing key padding, as a fused MPT or BLOOM attention runs it: query
  // blocks, the decode path (q 1, 2), a KV cache offset.
  for (int64_t q_len : {70, 2, 1}) {
    AttentionCase c;
    c.name = "alibi_causal_padded_q" + std::to_string(q_len);
    c.shape = shape(3, 4, 4, q_len, 150, 64, 64, Layout::kBTHD);
    c.bias = BiasKind::kPerHeadKeys;
    c.causal = true;
    c.causal_offset = 150 - q_len;
    c.kv_valid_len = {150, 97, 3};
    c.masked_rows = MaskedRows::kUniform;
    cases.push_back(c);
  }
  for (int64_t q_len : {70, 2}) {
    AttentionCase c;  // NaN bias behind the causal diagonal: it must not reach any row
    c.name = "bias_nan_behind_causal_q" + std::to_string(q_len);
    c.shape = shape(2, 2, 2, q_len, 130, 64, 64, Layout::kBHTD);
    c.bias = BiasKind::kFull;
    c.causal = true;
    c.causal_offset = 130 - q_len - 20;  // the last 20 keys hidden from every row
    c.bias_nan_where_causal_hides = true;
    cases.push_back(c);
  }
  {
    AttentionCase c;  // every key of many rows hidden by the bias: those rows are zeros
    c.name = "bias_mostly_neginf";
    c.shape = shape(1, 2, 2, 40, 40, 32, 32, Layout::kBHTD);
    c.bias = BiasKind::kFull;
    c.bias_neg_inf_fraction = 0.97f;
    cases.push_back(c);
  }
  // Rows whose every key the bias hides: with -inf they follow masked_rows
  // (zeros, NaN, or the mean of V); with a finite finfo.min, -1e9 or -1e4
  // they are plain softmax rows of scores + that bias, rounded in float as
  // the reference (and the unfused Add) rounds them. Query blocks (q 70) and
  // the decode path (q 2), causal or not.
  for (float hidden : {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::max(), -1e9f, -1e4f}) {
    for (MaskedRows rows : {MaskedRows::kZeros, MaskedRows::kNaN, MaskedRows::kUniform}) {
      if (std::isfinite(hidden) && rows != MaskedRows::kNaN) continue;  // the policy is not reached
      for (int64_t q_len : {70, 2}) {
        AttentionCase c;
        const char* fill = !std::isfinite(hidden) ? "neginf" : hidden == -1e9f ? "neg1e9" : hidden == -1e4f ? "neg1e4" : "finfo_min";
        c.name = std::string("masked_rows_") + fill + "_" +
                 std::string(ToString(rows)) + "_q" +
                 std::to_string(q_len);
        c.shape = shape(2, 4, 2, q_len, 150, 64, 64, Layout::kBTHD);
        c.bias = BiasKind::kFull;
        c.bias_neg_inf_fraction = 0.3f;
        c.bias_hidden_value = hidden;
        c.bias_hidden_row_period = 3;
        c.masked_rows = rows;
        c.causal = q_len == 70;
        c.causal_offset = 150 - q_len;
        cases.push_back(c);
      }
    }
  }
  {
    AttentionCase c;  // structurally hidden rows (negative causal offset) follow masked_rows too
    c.name = "masked_rows_negative_offset_uniform";
    c.shape = shape(1, 2, 1, 40, 40, 32, 32, Layout::kBHTD);
    c.causal = true;
    c.causal_offset = -5;
    c.masked_rows = MaskedRows::kUniform;
    cases.push_back(c);
  }
  // kv_valid_len, including an empty batch.
  for (int64_t q_len : {100, 1}) {
    AttentionCase c;
    c.name = "kv_valid_q" + std::to_string(q_len);
    c.shape = shape(3, 2, 2, q_len, 300, 64, 64, Layout::kBTHD);
    c.kv_valid_len = {0, 17, 300};
    cases.push_back(c);
  }
  // Fully masked rows from a negative causal offset (rows 0..9 see nothing).
  {
    AttentionCase c;
    c.name = "masked_rows_negative_offset";
    c.shape = shape(1, 2, 2, 80, 80, 64, 64, Layout::kBHTD);
    c.causal = true;
    c.causal_offset = -10;
    cases.push_back(c);
  }
  // Softcap, with large scores so that it matters, alone and with a bias.
  for (bool bias : {false, true}) {
    for (int64_t q_len : {90, 1}) {
      AttentionCase c;
      c.name = std::string("softcap") + (bias ? "_bias" : "") + "_q" + std::to_string(q_len);
      c.shape = shape(1, 2, 2, q_len, 150, 64, 64, Layout::kBTHD);
      c.scale = 2.0f;
      c.softcap = 5.0f;
      c.causal = true;
      c.causal_offset = 150 - q_len;
      if (bias) {
        c.bias = BiasKind::kFull;
        c.bias_neg_inf_fraction = 0.2f;
      }
      cases.push_back(c);
    }
  }
  // Large scores (scale 1 with D = 64): the online max moves a lot.
  {
    AttentionCase c;
    c.name = "large_scores";
    c.shape = shape(1, 2, 2, 200, 200, 64, 64, Layout::kBHTD);
    c.scale = 1.5f;
    c.causal = true;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace attune::attention::testing
