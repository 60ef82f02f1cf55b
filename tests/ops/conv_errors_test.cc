// Conv refuses every bad input with one line naming the node, the op and the
// tensor or attribute: InvalidArgument for a bad model or input,
// Unimplemented for an unsupported type or rank, ResourceExhausted for an
// output above the session's tensor limit. Never a crash.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/kernel_runner.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
using Ints = std::vector<int64_t>;

struct BadCase {
  std::string name;
  Shape x, w;
  std::optional<Shape> b;
  Attributes attrs;
  std::string mention;  // the tensor or attribute the message must name
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
  ElementType x_type = ElementType::kFloat32, w_type = ElementType::kFloat32, b_type = ElementType::kFloat32;
  int64_t max_bytes = kDefaultMaxTensorBytes;
};

std::vector<BadCase> Cases() {
  const auto kUnimplemented = absl::StatusCode::kUnimplemented;
  return {
      // Ranks and channel counts.
      {"x_rank_2", {1, 3}, {2, 3}, std::nullopt, {}, "input X"},
      {"four_spatial_dims", {1, 1, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1}, std::nullopt, {}, "4 spatial dims", kUnimplemented},
      {"w_rank", {1, 3, 5}, {2, 3, 3, 3}, std::nullopt, {}, "weights W"},
      {"channels_not_divisible_by_group", {1, 3, 5}, {2, 1, 3}, std::nullopt, Attrs({{"group", int64_t{2}}}),
       "group 2"},
      {"w_channels", {1, 4, 5}, {2, 3, 3}, std::nullopt, {}, "weights W"},
      {"w_channels_with_group", {1, 4, 5}, {2, 4, 3}, std::nullopt, Attrs({{"group", int64_t{2}}}), "weights W"},
      {"m_not_divisible_by_group", {1, 4, 5}, {3, 2, 3}, std::nullopt, Attrs({{"group", int64_t{2}}}),
       "output channels"},
      {"empty_kernel", {1, 1, 5}, {1, 1, 0}, std::nullopt, {}, "weights W"},
      {"bias_length", {1, 3, 5}, {2, 3, 3}, Shape{3}, {}, "bias B"},
      {"bias_rank", {1, 3, 5}, {2, 3, 3}, Shape{1, 2}, {}, "bias B"},
      // Attribute values and lengths.
      {"strides_length", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"strides", Ints{1, 1}}}), "'strides'"},
      {"strides_zero", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"strides", Ints{0}}}), "'strides'"},
      {"strides_negative", {1, 3, 5, 5}, {2, 3, 3, 3}, std::nullopt, Attrs({{"strides", Ints{1, -2}}}), "'strides'"},
      {"strides_not_ints", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"strides", std::vector<float>{1.0f}}}),
       "'strides'"},
      {"dilations_zero", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"dilations", Ints{0}}}), "'dilations'"},
      {"dilations_length", {1, 3, 5, 5}, {2, 3, 3, 3}, std::nullopt, Attrs({{"dilations", Ints{1}}}), "'dilations'"},
      {"lists_disagree", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"strides", Ints{1, 1}}, {"dilations", Ints{1}}}),
       "'strides'"},
      {"pads_negative", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"pads", Ints{-1, 0}}}), "'pads'"},
      {"pads_odd_count", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"pads", Ints{1, 1, 1}}}), "'pads'"},
      {"pads_length", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"pads", Ints{1, 1, 1, 1}}}), "'pads'"},
      {"pads_with_auto_pad", {1, 3, 5}, {2, 3, 3}, std::nullopt,
       Attrs({{"pads", Ints{1, 1}}, {"auto_pad", std::string("SAME_UPPER")}}), "'pads'"},
      {"kernel_shape_differs", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"kernel_shape", Ints{5}}}),
       "'kernel_shape'"},
      {"kernel_shape_zero", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"kernel_shape", Ints{0}}}),
       "'kernel_shape'"},
      {"auto_pad_unknown", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"auto_pad", std::string("SAME")}}),
       "'auto_pad'"},
      {"group_zero", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"group", int64_t{0}}}), "'group'"},
      {"group_negative", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"group", int64_t{-3}}}), "'group'"},
      {"group_not_int", {1, 3, 5}, {2, 3, 3}, std::nullopt, Attrs({{"group", 1.0f}}), "'group'"},
      // Outputs that would be empty, and sizes beyond int64 or the limit.
      {"kernel_longer_than_input", {1, 1, 2}, {1, 1, 5}, std::nullopt, {}, "spatial axis 0"},
      {"dilated_kernel_longer", {1, 1, 5, 5}, {1, 1, 1, 3}, std::nullopt, Attrs({{"dilations", Ints{1, 3}}}),
       "spatial axis 1"},
      {"valid_kernel_longer", {1, 1, 2}, {1, 1, 3}, std::nullopt, Attrs({{"auto_pad", std::string("VALID")}}),
       "spatial axis 0"},
      {"same_of_empty_input", {1, 1, 0}, {1, 1, 1}, std::nullopt, Attrs({{"auto_pad", std::string("SAME_LOWER")}}),
       "spatial axis 0"},
      {"pads_overflow", {1, 1, 5}, {1, 1, 3}, std::nullopt, Attrs({{"pads", Ints{kMax, 1}}}), "overflows int64"},
      {"dilation_overflow", {1, 1, 5}, {1, 1, 3}, std::nullopt, Attrs({{"dilations", Ints{kMax}}}),
       "overflows int64"},
      // No input channels leave X and W empty whatever M and the pads are.
      {"output_count_overflow", {1, 0, 1}, {int64_t{1} << 40, 0, 1}, std::nullopt,
       Attrs({{"pads", Ints{0, int64_t{1} << 40}}}), "output Y"},
      {"output_above_limit", {1, 0, 1}, {1024, 0, 1}, std::nullopt, Attrs({{"pads", Ints{0, int64_t{1} << 20}}}),
       "output Y", absl::StatusCode::kResourceExhausted, ElementType::kFloat32, ElementType::kFloat32,
       ElementType::kFloat32, int64_t{1} << 20},
      // Element types.
      {"x_float16", {1, 3, 5}, {2, 3, 3}, std::nullopt, {}, "input X", kUnimplemented, ElementType::kFloat16,
       ElementType::kFloat16, ElementType::kFloat16},
      {"x_int64", {1, 3, 5}, {2, 3, 3}, std::nullopt, {}, "input X", kUnimplemented, ElementType::kInt64,
       ElementType::kInt64},
      {"w_float64", {1, 3, 5}, {2, 3, 3}, std::nullopt, {}, "weights W", absl::StatusCode::kInvalidArgument,
       ElementType::kFloat32, ElementType::kFloat64},
      {"b_float16", {1, 3, 5}, {2, 3, 3}, Shape{2}, {}, "bias B", absl::StatusCode::kInvalidArgument,
       ElementType::kFloat32, ElementType::kFloat32, ElementType::kFloat16},
  };
}

absl::Status RunBad(const BadCase& c) {
  KernelCall call;
  call.op_type = "Conv";
  call.opset = 11;
  call.attributes = c.attrs;
  call.inputs = {*Tensor::Create(c.x_type, c.x), *Tensor::Create(c.w_type, c.w)};
  if (c.b) call.inputs.push_back(*Tensor::Create(c.b_type, *c.b));
  call.constant_inputs = {1};  // W as a model's weights are
  call.options.max_tensor_bytes = c.max_bytes;
  return RunKernel(call).status();
}

TEST(ConvErrorsTest, EachBadInputNamesNodeOpAndTensor) {
  for (const BadCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    const absl::Status s = RunBad(c);
    EXPECT_EQ(s.code(), c.code) << s;
    EXPECT_TRUE(MessageHas(s, "Conv node 'test_node'")) << s;
    EXPECT_TRUE(MessageHas(s, c.mention)) << s;
    EXPECT_FALSE(MessageHas(s, "\n")) << s;
  }
}

TEST(ConvErrorsTest, MissingInputs) {
  KernelCall call;
  call.op_type = "Conv";
  call.inputs = {F32({1, 1, 3}, {1, 2, 3}), Tensor()};
  const absl::Status s = RunKernel(call).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(MessageHas(s, "Conv node 'test_node'")) << s;
  EXPECT_TRUE(MessageHas(s, "X and W")) << s;
}

// A name with a line break stays on one line.
TEST(ConvErrorsTest, NodeNameIsEscaped) {
  KernelCall call;
  call.op_type = "Conv";
  call.attributes = Attrs({{"strides", Ints{0}}});
  call.inputs = {F32({1, 1, 3}, {1, 2, 3}), F32({1, 1, 1}, {1})};
  const KernelRegistry::Entry* entry = *DefaultKernelRegistry().Find("", "Conv", 22);
  KernelInfo info;
  info.node_name = "conv\nnext line";
  info.op_type = "Conv";
  info.opset = 22;
  info.attributes = &call.attributes;
  info.input_present = {true, true};
  info.constant_inputs = {nullptr, nullptr};
  info.input_types = {ElementType::kFloat32, ElementType::kFloat32};
  info.num_outputs = 1;
  info.options = &call.options;
  const absl::Status s = entry->factory(info).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(MessageHas(s, "Conv node 'conv\\nnext line'")) << s;
  EXPECT_FALSE(MessageHas(s, "\n")) << s;
}

}  // namespace
}  // namespace attune::testing
