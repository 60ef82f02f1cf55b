#include "ops/attention/attention_shapes.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::attention {
namespace {

absl::Status Invalid(const AttentionParams& p, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": ", message));
}

absl::Status CheckElementType(const AttentionParams& p, const char* name, const Tensor& t, ElementType expected) {
  const ElementType type = t.type();
  if (type == expected) return absl::OkStatus();
  return Invalid(p, absl::StrCat("input ", name, " has type ", ElementTypeName(type), " but Q has type ",
                                 ElementTypeName(expected)));
}

absl::Status CheckQueryType(const AttentionParams& p, ElementType type) {
  if (type == ElementType::kFloat32 || type == ElementType::kFloat16 || type == ElementType::kBFloat16) {
    return absl::OkStatus();
  }
  if (type == ElementType::kFloat64) {
    return absl::UnimplementedError(absl::StrCat(p.op_name, ": float64 inputs are not supported"));
  }
  return Invalid(p, absl::StrCat("Q must be float32, float16 or bfloat16 (got ", ElementTypeName(type), ")"));
}

// Splits a (batch, seq, heads·dim) hidden size into heads of `dim`.
absl::StatusOr<int64_t> HeadDim(const AttentionParams& p, const char* name, int64_t hidden, int64_t heads,
                                const char* heads_name) {
  if (hidden % heads != 0) {
    return Invalid(
        p, absl::StrCat("hidden size ", hidden, " of ", name, " is not divisible by ", heads_name, " = ", heads));
  }
  return hidden / heads;
}

absl::Status ResolveThreeD(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                           AttentionShapes& s) {
  if (p.q_heads <= 0) {
    return Invalid(p, "3-D Q, K, V need the number of query heads as an attribute (num_heads / q_num_heads)");
  }
  s.q_heads = p.q_heads;
  s.kv_heads = p.kv_heads > 0 ? p.kv_heads : p.q_heads;
  s.q_len = q.shape()[1];
  s.new_kv_len = k.shape()[1];
  if (v.shape()[1] != s.new_kv_len) {
    return Invalid(p,
                   absl::StrCat("K and V have different sequence lengths (", s.new_kv_len, " vs ", v.shape()[1], ")"));
  }
  ASSIGN_OR_RETURN(s.head_dim, HeadDim(p, "Q", q.shape()[2], s.q_heads, "the number of query heads"));
  ASSIGN_OR_RETURN(int64_t k_dim, HeadDim(p, "K", k.shape()[2], s.kv_heads, "kv_num_heads"));
  ASSIGN_OR_RETURN(s.v_head_dim, HeadDim(p, "V", v.shape()[2], s.kv_heads, "kv_num_heads"));
  if (k_dim != s.head_dim) {
    return Invalid(p, absl::StrCat("head size of K (", k_dim, ") differs from that of Q (", s.head_dim, ")"));
  }
  return absl::OkStatus();
}

absl::Status ResolveFourD(const AttentionParams& p, const Tensor& q, const Tensor& k, const Tensor& v,
                          AttentionShapes& s) {
  s.q_heads = q.shape()[1];
  s.kv_heads = k.shape()[1];
  if (p.q_heads > 0 && p.q_heads != s.q_heads) {
    return Invalid(p, absl::StrCat("Q has ", s.q_heads, " heads but the attribute says ", p.q_heads));
  }
  if (p.kv_heads > 0 && p.kv_heads != s.kv_heads) {
    return Invalid(p, absl::StrCat("K has ", s.kv_heads, " heads but kv_num_heads is ", p.kv_heads));
  }
  if (v.shape()[1] != s.kv_heads) {
    return Invalid(p, absl::StrCat("K and V have different head counts (", s.kv_heads, " vs ", v.shape()[1], ")"));
  }
  s.q_len = q.shape()[2];
  s.new_kv_len = k.shape()[2];
  if (v.shape()[2] != s.new_kv_len) {
    return Invalid(p,
                   absl::StrCat("K and V have different sequence lengths (", s.new_kv_len, " vs ", v.shape()[2], ")"));
  }
  s.head_dim = q.shape()[3];
  if (k.shape()[3] != s.head_dim) {
    return Invalid(p, absl::StrCat("head size of K (", k.shape()[3], ") differs from that of Q (", s.head_dim, ")"));
  }
  s.v_head_dim = v.shape()[3];
  return absl::OkStatus();
}

absl::Status ResolvePast(const AttentionParams& p, const Tensor* past_key, const Tensor* past_value,
                         AttentionShapes& s) {
  if ((past_key == nullptr) != (past_value == nullptr)) {
    return Invalid(p, "past_key and past_value must be given together");
  }
  if (past_key == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(CheckElementType(p, "past_key", *past_key, s.type));
  RETURN_IF_ERROR(CheckElementType(p, "past_value", *past_value, s.type));
  const std::vector<int64_t> key_expected = {s.batch, s.kv_heads, -1, s.head_dim};
  const std::vector<int64_t> value_expected = {s.batch, s.kv_heads, -1, s.v_head_dim};
  auto matches = [](const std::vector<int64_t>& shape, const std::vector<int64_t>& expected) {
    if (shape.size() != expected.size()) return false;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (expected[i] >= 0 && shape[i] != expected[i]) return false;
    }
    return true;
  };
  if (!matches(past_key->shape(), key_expected)) {
    return Invalid(p, absl::StrCat("past_key has shape ", ShapeToString(past_key->shape()), ", expected [", s.batch,
                                   ", ", s.kv_heads, ", past_len, ", s.head_dim, "]"));
  }
  if (!matches(past_value->shape(), value_expected)) {
    return Invalid(p, absl::StrCat("past_value has shape ", ShapeToString(past_value->shape()), ", expected [", s.batch,
                                   ", ", s.kv_heads, ", past_len, ", s.v_head_dim, "]"));
  }
  if (past_key->shape()[2] != past_value->shape()[2]) {
    return Invalid(p, absl::StrCat("past_key and past_value hold different lengths (", past_key->shape()[2], " vs ",
                                   past_value->shape()[2], ")"));
  }
  s.has_past = true;
  s.past_len = past_key->shape()[2];
  return absl::OkStatus();
}

}  // namespace

std::vector<int64_t> AttentionShapes::y_shape() const {
  if (three_d) return {batch, q_len, q_heads * v_head_dim};
  return {batch, q_heads, q_len, v_head_dim};
}
std::vector<int64_t> AttentionShapes::present_key_shape() const { return {batch, kv_heads, total_kv_len, head_dim}; }
std::vector<int64_t> AttentionShapes::present_value_shape() const {
  return {batch, kv_heads, total_kv_len, v_head_dim};
}
std::vector<int64_t> AttentionShapes::qk_shape() const { return {batch, q_heads, q_len, total_kv_len}; }

absl::StatusOr<AttentionShapes> ResolveAttentionShapes(const AttentionParams& p, const Tensor& q, const Tensor& k,
                                                       const Tensor& v, const Tensor* past_key,
                                                       const Tensor* past_value) {
  AttentionShapes s;
  s.type = q.type();
  RETURN_IF_ERROR(CheckQueryType(p, s.type));
  RETURN_IF_ERROR(CheckElementType(p, "K", k, s.type));
  RETURN_IF_ERROR(CheckElementType(p, "V", v, s.type));
  if (q.rank() != 3 && q.rank() != 4) {
    return Invalid(p, absl::StrCat("Q must be 3-D (batch, seq, hidden) or 4-D (batch, heads, seq, head_size), got ",
                                   ShapeToString(q.shape())));
  }
  if (k.rank() != q.rank() || v.rank() != q.rank()) {
    return Invalid(p, absl::StrCat("Q, K and V must have the same rank (got ", ShapeToString(q.shape()), ", ",
                                   ShapeToString(k.shape()), ", ", ShapeToString(v.shape()), ")"));
  }
  s.three_d = q.rank() == 3;
  s.batch = q.shape()[0];
  if (k.shape()[0] != s.batch || v.shape()[0] != s.batch) {
    return Invalid(p, absl::StrCat("Q, K and V have different batch sizes (", s.batch, ", ", k.shape()[0], ", ",
                                   v.shape()[0], ")"));
  }
  RETURN_IF_ERROR(s.three_d ? ResolveThreeD(p, q, k, v, s) : ResolveFourD(p, q, k, v, s));
  if (s.q_heads <= 0 || s.kv_heads <= 0) {
    return Invalid(p, absl::StrCat("head counts must be > 0 (query ", s.q_heads, ", key/value ", s.kv_heads, ")"));
  }
  if (s.q_heads % s.kv_heads != 0) {
    return Invalid(p, absl::StrCat("the number of key/value heads (", s.kv_heads,
                                   ") must divide the number of query heads (", s.q_heads, ")"));
  }
  RETURN_IF_ERROR(ResolvePast(p, past_key, past_value, s));
  s.total_kv_len = s.past_len + s.new_kv_len;
  return s;
}

}  // namespace attune::attention
