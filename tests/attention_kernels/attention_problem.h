// Owns the buffers of one attention problem and builds AttentionArgs over
// them in either layout (B,H,T,D or B,T,H·D), for the kernel tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ops/attention/kernels/attention_args.h"

namespace attune::attention::testing {

enum class Layout { kBHTD, kBTHD };

struct ProblemShape {
  int64_t batch = 1, q_heads = 1, kv_heads = 1, q_len = 1, kv_len = 1, head_dim = 4, v_head_dim = 4;
  Layout layout = Layout::kBHTD;
};

class AttentionProblem {
 public:
  explicit AttentionProblem(const ProblemShape& s) : s_(s) {
    q_.assign(s.batch * s.q_heads * s.q_len * s.head_dim, 0.0f);
    k_.assign(s.batch * s.kv_heads * s.kv_len * s.head_dim, 0.0f);
    v_.assign(s.batch * s.kv_heads * s.kv_len * s.v_head_dim, 0.0f);
    y_.assign(s.batch * s.q_heads * s.q_len * s.v_head_dim, -12345.0f);  // poison: every element must be written
  }

  void FillRandom(uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& x : q_) x = dist(gen);
    for (float& x : k_) x = dist(gen);
    for (float& x : v_) x = dist(gen);
  }

  // Element accessors by logical index, whatever the layout.
  float& q(int64_t b, int64_t h, int64_t t, int64_t d) { return q_[Index(b, h, t, d, s_.q_heads, s_.q_len, s_.head_dim)]; }
  float& k(int64_t b, int64_t h, int64_t t, int64_t d) { return k_[Index(b, h, t, d, s_.kv_heads, s_.kv_len, s_.head_dim)]; }
  float& v(int64_t b, int64_t h, int64_t t, int64_t d) { return v_[Index(b, h, t, d, s_.kv_heads, s_.kv_len, s_.v_head_dim)]; }
  float y(int64_t b, int64_t h, int64_t t, int64_t d) const { return y_[Index(b, h, t, d, s_.q_heads, s_.q_len, s_.v_head_dim)]; }
  std::vector<float>& y_buffer() { return y_; }

  /// Args over the buffers; bias/masks/scale left for the caller to set.
  AttentionArgs Args() {
    AttentionArgs a;
    a.batch = s_.batch;
    a.q_heads = s_.q_heads;
    a.kv_heads = s_.kv_heads;
    a.q_len = s_.q_len;
    a.kv_len = s_.kv_len;
    a.head_dim = s_.head_dim;
    a.v_head_dim = s_.v_head_dim;
    a.q = View(q_.data(), s_.q_heads, s_.q_len, s_.head_dim);
    a.k = View(k_.data(), s_.kv_heads, s_.kv_len, s_.head_dim);
    a.v = View(v_.data(), s_.kv_heads, s_.kv_len, s_.v_head_dim);
    StridedView yv = View(y_.data(), s_.q_heads, s_.q_len, s_.v_head_dim);
    a.y = y_.data();
    a.y_stride_batch = yv.stride_batch;
    a.y_stride_head = yv.stride_head;
    a.y_stride_seq = yv.stride_seq;
    return a;
  }

 private:
  int64_t Index(int64_t b, int64_t h, int64_t t, int64_t d, int64_t heads, int64_t len, int64_t dim) const {
    if (s_.layout == Layout::kBHTD) return ((b * heads + h) * len + t) * dim + d;
    return ((b * len + t) * heads + h) * dim + d;
  }
  StridedView View(const float* data, int64_t heads, int64_t len, int64_t dim) const {
    StridedView v;
    v.data = data;
    if (s_.layout == Layout::kBHTD) {
      v.stride_batch = heads * len * dim;
      v.stride_head = len * dim;
      v.stride_seq = dim;
    } else {
      v.stride_batch = len * heads * dim;
      v.stride_head = dim;
      v.stride_seq = heads * dim;
    }
    return v;
  }

  ProblemShape s_;
  std::vector<float> q_, k_, v_, y_;
};

}  // namespace attune::attention::testing
