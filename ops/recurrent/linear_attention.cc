// LinearAttention (opset 27): a recurrent state S [d_k, d_v] per batch and KV
// head, updated token by token and read by every query head of the KV head's
// group (query head h reads KV head h / (q_num_heads / kv_num_heads)):
//   linear:      S = S + k v^T
//   gated:       S = exp(g) S + k v^T
//   delta:       S = S + k (beta (v - S^T k))^T
//   gated_delta: S = exp(g) S, then as delta
//   o = scale q^T S
// q, k, v, decay and beta are packed [B, T, H * D]; the state is
// [B, H_kv, d_k, d_v] in its own float type. Everything is computed in double;
// chunk_size is a tuning hint of chunked implementations and changes nothing here.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/common/parallel.h"
#include "ops/recurrent/kernels.h"

namespace attune {
namespace {

enum Input { kQuery, kKey, kValue, kPastState, kDecay, kBeta };

struct LinearAttentionAttributes {
  bool gated = false;
  bool delta = false;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  double scale = 0;  // 0: 1 / sqrt(d_k)
};

// Sizes of one run, from the inputs' shapes.
struct Sizes {
  int64_t b = 0, t = 0, d_k = 0, d_v = 0;
  int64_t decay_width = 0;  // 1 (per head) or d_k (per key dimension)
  int64_t beta_heads = 0;   // kv_heads or 1
};

class LinearAttentionKernel final : public Kernel {
 public:
  LinearAttentionKernel(std::string label, LinearAttentionAttributes attrs) : label_(std::move(label)), a_(attrs) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(Sizes s, CheckShapes(ctx));
    const ElementType type = ctx.input(kQuery)->type();
    const Tensor* past = ctx.input(kPastState);
    ASSIGN_OR_RETURN(std::vector<double> q, LoadAsDoubles(*ctx.input(kQuery), absl::StrCat(label_, ": input query")));
    ASSIGN_OR_RETURN(std::vector<double> k, LoadAsDoubles(*ctx.input(kKey), absl::StrCat(label_, ": input key")));
    ASSIGN_OR_RETURN(std::vector<double> v, LoadAsDoubles(*ctx.input(kValue), absl::StrCat(label_, ": input value")));
    std::vector<double> state(static_cast<size_t>(s.b * a_.kv_heads * s.d_k * s.d_v), 0.0);
    if (past != nullptr) {
      ASSIGN_OR_RETURN(state, LoadAsDoubles(*past, absl::StrCat(label_, ": input past_state")));
    }
    std::vector<double> decay, beta;
    if (a_.gated) {
      ASSIGN_OR_RETURN(decay, LoadAsDoubles(*ctx.input(kDecay), absl::StrCat(label_, ": input decay")));
    }
    if (a_.delta) {
      ASSIGN_OR_RETURN(beta, LoadAsDoubles(*ctx.input(kBeta), absl::StrCat(label_, ": input beta")));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, type, {s.b, s.t, a_.q_heads * s.d_v}));
    std::vector<double> out(static_cast<size_t>(y->num_elements()));
    const double scale = a_.scale != 0 ? a_.scale : 1.0 / std::sqrt(static_cast<double>(s.d_k));
    const int64_t group = a_.q_heads / a_.kv_heads;
    ParallelForRange(s.b * a_.kv_heads, 1, ctx.threads(), [&](int64_t begin, int64_t end) {
      std::vector<double> retrieved(s.d_v), update(s.d_v);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / a_.kv_heads, h = bh % a_.kv_heads;
        double* st = state.data() + bh * s.d_k * s.d_v;
        for (int64_t t = 0; t < s.t; ++t) {
          const int64_t row = b * s.t + t;
          const double* kt = k.data() + (row * a_.kv_heads + h) * s.d_k;
          const double* vt = v.data() + (row * a_.kv_heads + h) * s.d_v;
          if (a_.gated) {
            const double* g = decay.data() + (row * a_.kv_heads + h) * s.decay_width;
            for (int64_t i = 0; i < s.d_k; ++i) {
              const double f = std::exp(g[s.decay_width == 1 ? 0 : i]);
              for (int64_t j = 0; j < s.d_v; ++j) st[i * s.d_v + j] *= f;
            }
          }
          for (int64_t j = 0; j < s.d_v; ++j) update[j] = vt[j];
          if (a_.delta) {
            const double bt = beta[row * s.beta_heads + (s.beta_heads == 1 ? 0 : h)];
            std::fill(retrieved.begin(), retrieved.end(), 0.0);
            for (int64_t i = 0; i < s.d_k; ++i)
              for (int64_t j = 0; j < s.d_v; ++j) retrieved[j] += st[i * s.d_v + j] * kt[i];
            for (int64_t j = 0; j < s.d_v; ++j) update[j] = bt * (vt[j] - retrieved[j]);
          }
          for (int64_t i = 0; i < s.d_k; ++i)
            for (int64_t j = 0; j < s.d_v; ++j) st[i * s.d_v + j] += kt[i] * update[j];
          for (int64_t g = 0; g < group; ++g) {
            const int64_t hq = h * group + g;
            const double* qt = q.data() + (row * a_.q_heads + hq) * s.d_k;
            double* ot = out.data() + (row * a_.q_heads + hq) * s.d_v;
            for (int64_t j = 0; j < s.d_v; ++j) {
              double sum = 0;
              for (int64_t i = 0; i < s.d_k; ++i) sum += qt[i] * st[i * s.d_v + j];
              ot[j] = scale * sum;
            }
          }
        }
      }
    });
    RETURN_IF_ERROR(StoreDoubles(out, *y, absl::StrCat(label_, ": output")));
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      const ElementType state_type = past != nullptr ? past->type() : type;
      ASSIGN_OR_RETURN(Tensor * present,
                       ctx.AllocateOutputForOverwrite(1, state_type, {s.b, a_.kv_heads, s.d_k, s.d_v}));
      RETURN_IF_ERROR(StoreDoubles(state, *present, absl::StrCat(label_, ": output present_state")));
    }
    return absl::OkStatus();
  }

 private:
  // One packed [B, T, heads * width] input; its width per head.
  absl::StatusOr<int64_t> HeadWidth(const Tensor& x, const char* name, int64_t b, int64_t t, int64_t heads) const {
    const std::vector<int64_t>& d = x.shape();
    if (d.size() != 3 || d[0] != b || d[1] != t || d[2] % heads != 0 || d[2] == 0)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", name, " has shape ", ShapeToString(d),
                                                     "; expected [", b, ", ", t, ", ", heads, " * head size]"));
    return d[2] / heads;
  }

  absl::StatusOr<Sizes> CheckShapes(KernelContext& ctx) const {
    for (int i : {kQuery, kKey, kValue})
      if (ctx.input(i) == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs query, key and value"));
    const Tensor& q = *ctx.input(kQuery);
    if (q.shape().size() != 3)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": input query has shape ", ShapeToString(q.shape()), "; expected rank 3 [B, T, H*D]"));
    Sizes s;
    s.b = q.shape()[0];
    s.t = q.shape()[1];
    ASSIGN_OR_RETURN(s.d_k, HeadWidth(q, "query", s.b, s.t, a_.q_heads));
    ASSIGN_OR_RETURN(const int64_t key_width, HeadWidth(*ctx.input(kKey), "key", s.b, s.t, a_.kv_heads));
    if (key_width != s.d_k)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input key has head size ", key_width,
                                                     " but query has ", s.d_k));
    ASSIGN_OR_RETURN(s.d_v, HeadWidth(*ctx.input(kValue), "value", s.b, s.t, a_.kv_heads));
    for (int i : {kKey, kValue, kDecay, kBeta})
      if (ctx.input(i) != nullptr && ctx.input(i)->type() != q.type())
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", i, " has type ",
                                                       ElementTypeName(ctx.input(i)->type()), "; query has ",
                                                       ElementTypeName(q.type())));
    if (const Tensor* past = ctx.input(kPastState);
        past != nullptr && past->shape() != std::vector<int64_t>{s.b, a_.kv_heads, s.d_k, s.d_v})
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input past_state has shape ",
                                                     ShapeToString(past->shape()), "; expected [", s.b, ", ",
                                                     a_.kv_heads, ", ", s.d_k, ", ", s.d_v, "]"));
    if (a_.gated) {
      const Tensor& decay = *ctx.input(kDecay);
      ASSIGN_OR_RETURN(s.decay_width, HeadWidth(decay, "decay", s.b, s.t, a_.kv_heads));
      if (s.decay_width != 1 && s.decay_width != s.d_k)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input decay's last dim is ", decay.shape()[2],
                                                       "; expected kv_num_heads (", a_.kv_heads,
                                                       ") or kv_num_heads * d_k (", a_.kv_heads * s.d_k, ")"));
    }
    if (a_.delta) {
      const std::vector<int64_t>& d = ctx.input(kBeta)->shape();
      if (d.size() != 3 || d[0] != s.b || d[1] != s.t || (d[2] != a_.kv_heads && d[2] != 1))
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input beta has shape ", ShapeToString(d),
                                                       "; expected [", s.b, ", ", s.t, ", ", a_.kv_heads, " or 1]"));
      s.beta_heads = d[2];
    }
    return s;
  }

  std::string label_;
  LinearAttentionAttributes a_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeLinearAttentionKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  auto present = [&](int i) { return i < info.num_inputs() && info.input_present[i]; };
  if (!present(kQuery) || !present(kKey) || !present(kValue))
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs query, key and value"));
  LinearAttentionAttributes a;
  ASSIGN_OR_RETURN(std::string rule, info.attrs().GetString("update_rule", "gated_delta"));
  if (rule == "gated") a.gated = true;
  else if (rule == "delta") a.delta = true;
  else if (rule == "gated_delta") a.gated = a.delta = true;
  else if (rule != "linear")
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'update_rule' has the unknown value ",
                                                   QuoteName(rule), "; expected linear, gated, delta or gated_delta"));
  if (!info.attrs().Has("q_num_heads") || !info.attrs().Has("kv_num_heads"))
    return absl::InvalidArgumentError(absl::StrCat(label, ": attributes 'q_num_heads' and 'kv_num_heads' are required"));
  ASSIGN_OR_RETURN(a.q_heads, info.attrs().GetInt("q_num_heads", 0));
  ASSIGN_OR_RETURN(a.kv_heads, info.attrs().GetInt("kv_num_heads", 0));
  if (a.q_heads <= 0 || a.kv_heads <= 0 || a.q_heads % a.kv_heads != 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": q_num_heads (", a.q_heads,
                                                   ") must be a positive multiple of kv_num_heads (", a.kv_heads, ")"));
  ASSIGN_OR_RETURN(float scale, info.attrs().GetFloat("scale", 0.0f));
  if (!std::isfinite(scale))
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'scale' is ", scale, "; it must be finite"));
  a.scale = scale;
  if (a.gated != present(kDecay))
    return absl::InvalidArgumentError(absl::StrCat(label, ": update_rule ", QuoteName(rule),
                                                   a.gated ? " requires" : " forbids", " input decay"));
  if (a.delta != present(kBeta))
    return absl::InvalidArgumentError(absl::StrCat(label, ": update_rule ", QuoteName(rule),
                                                   a.delta ? " requires" : " forbids", " input beta"));
  for (int i = 0; i < info.num_inputs() && i < static_cast<int>(info.input_types.size()); ++i)
    if (info.input_types[i] && !IsFloatType(*info.input_types[i]))
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " has type ",
                                                     ElementTypeName(*info.input_types[i]),
                                                     "; supported: float32, float64, float16, bfloat16"));
  return std::make_unique<LinearAttentionKernel>(std::move(label), a);
}

}  // namespace attune
