// Every attention path against the ONNX backend test data of the Attention
// operator (opset 23; reference outputs computed by the ONNX project), for
// the cases AttentionArgs expresses directly: 4-D (B,H,T,D) and 3-D
// (B,T,H·D, read through strides) inputs, GQA, float and bool masks with
// broadcasting, is_causal (upper-left aligned: offset 0), scale, softcap
// with -inf in the mask, and past keys/values concatenated in front.
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_reference.h"
#include "tests/common/backend_index.h"
#include "tests/common/paths.h"

namespace attune::attention::testing {
namespace {

struct Array {
  std::vector<int64_t> dims;
  std::vector<float> values;  // bool masks become 0 / -inf
  std::vector<int64_t> ints;  // INT64 tensors
};

bool ReadProto(const std::string& path, google::protobuf::MessageLite* message) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return in.good() && message->ParseFromString(bytes.str());
}

Array ToArray(const onnx::TensorProto& t) {
  Array a;
  a.dims.assign(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : a.dims) n *= d;
  a.values.resize(n);
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    if (!t.raw_data().empty()) {
      std::memcpy(a.values.data(), t.raw_data().data(), sizeof(float) * n);
    } else {
      for (int64_t i = 0; i < n; ++i) a.values[i] = t.float_data(i);
    }
  } else if (t.data_type() == onnx::TensorProto::BOOL) {
    for (int64_t i = 0; i < n; ++i) {
      const bool keep = !t.raw_data().empty() ? t.raw_data()[i] != 0 : t.int32_data(i) != 0;
      a.values[i] = keep ? 0.0f : -std::numeric_limits<float>::infinity();
    }
  } else if (t.data_type() == onnx::TensorProto::INT64) {
    a.ints.resize(n);
    if (!t.raw_data().empty()) {
      std::memcpy(a.ints.data(), t.raw_data().data(), sizeof(int64_t) * n);
    } else {
      for (int64_t i = 0; i < n; ++i) a.ints[i] = t.int64_data(i);
    }
  } else {
    ADD_FAILURE() << "unexpected tensor type " << t.data_type();
  }
  return a;
}

/// Concatenates [B, H, P, D] and [B, H, T, D] along the sequence.
Array ConcatSeq(const Array& past, const Array& now) {
  Array out;
  const int64_t b = now.dims[0], h = now.dims[1], p = past.dims[2], t = now.dims[2], d = now.dims[3];
  out.dims = {b, h, p + t, d};
  for (int64_t i = 0; i < b * h; ++i) {
    out.values.insert(out.values.end(), past.values.begin() + i * p * d, past.values.begin() + (i + 1) * p * d);
    out.values.insert(out.values.end(), now.values.begin() + i * t * d, now.values.begin() + (i + 1) * t * d);
  }
  return out;
}

class OnnxAttentionData : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxAttentionData, MatchesOnnxReferenceOutput) {
  ATTUNE_SKIP_WITHOUT_BACKEND_DATA();
  using attune::testing::BackendData;
  // ONNX Attention is opset 23: the ONNX 1.12 set has none of these cases.
  if (attune::testing::FindBackendData().set == BackendData::Set::kOnnx112) GTEST_SKIP() << attune::testing::NoCaseMessage();
  const std::string dir = attune::testing::BackendNodeDir() + "/" + GetParam();
  onnx::ModelProto model;
  ASSERT_TRUE(ReadProto(dir + "/model.onnx", &model)) << "cannot read " << dir << "/model.onnx";
  const onnx::NodeProto& node = model.graph().node(0);
  int64_t causal = 0, q_heads = 0, kv_heads = 0;
  float scale = 0.0f, softcap = 0.0f;
  for (const auto& attr : node.attribute()) {
    if (attr.name() == "is_causal") causal = attr.i();
    if (attr.name() == "q_num_heads") q_heads = attr.i();
    if (attr.name() == "kv_num_heads") kv_heads = attr.i();
    if (attr.name() == "scale") scale = attr.f();
    if (attr.name() == "softcap") softcap = attr.f();
  }
  // Data files are numbered over the inputs present, in node order.
  std::vector<Array> in;
  int file = 0;
  for (int i = 0; i < node.input_size(); ++i) {
    onnx::TensorProto t;
    if (node.input(i).empty()) {
      in.emplace_back();
      continue;
    }
    ASSERT_TRUE(ReadProto(dir + "/test_data_set_0/input_" + std::to_string(file++) + ".pb", &t));
    in.push_back(ToArray(t));
  }
  onnx::TensorProto expected_proto;
  ASSERT_TRUE(ReadProto(dir + "/test_data_set_0/output_0.pb", &expected_proto));
  const Array expected = ToArray(expected_proto);

  Array q = in[0], k = in[1], v = in[2];
  const bool three_d = q.dims.size() == 3;
  // 3-D inputs are [B, T, H·D]: view them as [B, H, T, D] through strides.
  auto dims4 = [&](const Array& x, int64_t heads) -> std::vector<int64_t> {
    if (!three_d) return x.dims;
    return {x.dims[0], heads, x.dims[1], x.dims[2] / heads};
  };
  if (!three_d) {
    q_heads = q.dims[1];
    kv_heads = k.dims[1];
  }
  if (in.size() > 5 && !in[4].dims.empty()) {  // past_key, past_value (4-D)
    ASSERT_FALSE(three_d) << "past with 3-D inputs not covered here";
    k = ConcatSeq(in[4], k);
    v = ConcatSeq(in[5], v);
  }
  const auto qd = dims4(q, q_heads), kd = dims4(k, kv_heads), vd = dims4(v, kv_heads);
  auto view = [&](const Array& x, const std::vector<int64_t>& d) {
    StridedView s;
    s.data = x.values.data();
    if (three_d) {
      s.stride_batch = d[2] * d[1] * d[3];
      s.stride_head = d[3];
      s.stride_seq = d[1] * d[3];
    } else {
      s.stride_batch = d[1] * d[2] * d[3];
      s.stride_head = d[2] * d[3];
      s.stride_seq = d[3];
    }
    return s;
  };
  AttentionArgs a;
  a.batch = qd[0];
  a.q_heads = qd[1];
  a.kv_heads = kd[1];
  a.q_len = qd[2];
  a.kv_len = kd[2];
  a.head_dim = qd[3];
  a.v_head_dim = vd[3];
  a.q = view(q, qd);
  a.k = view(k, kd);
  a.v = view(v, vd);
  a.scale = scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(a.head_dim));
  a.softcap = softcap;
  a.causal = causal != 0;
  a.causal_offset = 0;  // ONNX Attention: upper-left aligned
  Array mask_padded;
  if (in.size() > 3 && !in[3].dims.empty()) {
    // The mask broadcasts (numpy rules, right-aligned) to [B, H, Tq, Tk]; a
    // shorter last dim is padded with -inf (ONNX allows that).
    mask_padded = in[3];
    const int64_t width = mask_padded.dims.back();
    if (width < a.kv_len) {
      std::vector<float> wide;
      for (size_t r = 0; r < mask_padded.values.size() / width; ++r) {
        wide.insert(wide.end(), mask_padded.values.begin() + r * width, mask_padded.values.begin() + (r + 1) * width);
        wide.resize(wide.size() + a.kv_len - width, -std::numeric_limits<float>::infinity());
      }
      mask_padded.values = wide;
      mask_padded.dims.back() = a.kv_len;
    }
    const Array& m = mask_padded;
    std::vector<int64_t> md(4 - m.dims.size(), 1);
    md.insert(md.end(), m.dims.begin(), m.dims.end());
    a.bias.data = m.values.data();
    a.bias.stride_seq = md[2] == 1 ? 0 : md[3];
    a.bias.stride_head = md[1] == 1 ? 0 : md[2] * md[3];
    a.bias.stride_batch = md[0] == 1 ? 0 : md[1] * md[2] * md[3];
    ASSERT_EQ(md[3], a.kv_len);
  }
  if (in.size() > 6 && !in[6].ints.empty()) a.kv_valid_len = in[6].ints.data();  // nonpad_kv_seqlen
  ASSERT_EQ(expected.values.size(), static_cast<size_t>(a.batch * a.q_heads * a.q_len * a.v_head_dim));

  for (AttentionBackend backend :
       {AttentionBackend::kReference, AttentionBackend::kSimd, AttentionBackend::kOneDnn, AttentionBackend::kAuto}) {
    std::vector<float> y(expected.values.size(), NAN);
    a.y = y.data();
    if (three_d) {  // output [B, T, H·Dv]
      a.y_stride_batch = a.q_len * a.q_heads * a.v_head_dim;
      a.y_stride_head = a.v_head_dim;
      a.y_stride_seq = a.q_heads * a.v_head_dim;
    } else {
      a.y_stride_batch = a.q_heads * a.q_len * a.v_head_dim;
      a.y_stride_head = a.q_len * a.v_head_dim;
      a.y_stride_seq = a.v_head_dim;
    }
    ASSERT_TRUE(RunAttention(a, backend).ok());
    double max_err = 0.0;
    for (size_t i = 0; i < y.size(); ++i) max_err = std::max(max_err, std::fabs(double{y[i]} - expected.values[i]));
    EXPECT_LE(max_err, 1e-5) << "backend " << static_cast<int>(backend);
    EXPECT_FALSE(std::isnan(max_err));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Opset23, OnnxAttentionData,
    ::testing::Values("test_attention_4d", "test_attention_4d_causal", "test_attention_4d_scaled",
                      "test_attention_4d_softcap", "test_attention_4d_gqa", "test_attention_4d_gqa_causal",
                      "test_attention_4d_gqa_attn_mask", "test_attention_4d_gqa_softcap", "test_attention_4d_attn_mask",
                      "test_attention_4d_attn_mask_bool", "test_attention_4d_attn_mask_bool_4d",
                      "test_attention_4d_attn_mask_3d", "test_attention_4d_attn_mask_4d",
                      "test_attention_4d_attn_mask_4d_causal", "test_attention_4d_diff_heads_sizes",
                      "test_attention_4d_diff_heads_sizes_attn_mask", "test_attention_4d_diff_heads_sizes_causal",
                      "test_attention_4d_diff_heads_mask4d_padded_kv", "test_attention_4d_softcap_neginf_mask",
                      "test_attention_4d_softcap_neginf_mask_poison", "test_attention_4d_with_past_and_present",
                      "test_attention_4d_gqa_with_past_and_present", "test_attention_3d", "test_attention_3d_causal",
                      "test_attention_3d_scaled", "test_attention_3d_gqa", "test_attention_3d_gqa_causal",
                      "test_attention_3d_gqa_softcap", "test_attention_3d_gqa_attn_mask",
                      "test_attention_3d_diff_heads_sizes_attn_mask", "test_attention_3d_transpose_verification"),
    [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param).substr(15); });

}  // namespace
}  // namespace attune::attention::testing
