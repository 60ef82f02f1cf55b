// MatMulNBits nodes that do not fit their attributes are refused when the
// kernel is prepared, with one message naming the node, the op and the
// tensor or attribute at fault.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {
namespace {

struct NodeSpec {
  int64_t k = 64, n = 8, bits = 4, block = 32, level = 0;
  std::vector<int64_t> b_shape{8, 2, 16}, scales_shape{8, 2};
  ElementType scales_type = ElementType::kFloat32;
  std::vector<int64_t> zp_shape;  // empty: no zero points
  ElementType zp_type = ElementType::kUint8;
  std::vector<int64_t> bias_shape;  // empty: no bias
  bool g_idx = false;
  std::vector<int64_t> a_shape{2, 64};
};

absl::Status RunNode(const NodeSpec& node) {
  KernelCall call;
  call.op_type = "MatMulNBits";
  call.domain = "com.microsoft";
  call.opset = 1;
  call.attributes.Set("K", node.k);
  call.attributes.Set("N", node.n);
  call.attributes.Set("bits", node.bits);
  call.attributes.Set("block_size", node.block);
  call.attributes.Set("accuracy_level", node.level);
  call.inputs.push_back(*Tensor::Create(ElementType::kFloat32, node.a_shape));
  call.inputs.push_back(*Tensor::Create(ElementType::kUint8, node.b_shape));
  call.inputs.push_back(*Tensor::Create(node.scales_type, node.scales_shape));
  call.inputs.push_back(node.zp_shape.empty() ? Tensor() : *Tensor::Create(node.zp_type, node.zp_shape));
  call.inputs.push_back(node.g_idx ? *Tensor::Create(ElementType::kInt32, {node.k}) : Tensor());
  call.inputs.push_back(node.bias_shape.empty() ? Tensor() : *Tensor::Create(ElementType::kFloat32, node.bias_shape));
  call.constant_inputs = {1, 2, 3, 4, 5};
  auto out = RunKernel(call);
  return out.ok() ? absl::OkStatus() : out.status();
}

void ExpectRefused(const NodeSpec& node, const std::string& fragment) {
  const absl::Status s = RunNode(node);
  ASSERT_FALSE(s.ok()) << "accepted; wanted an error about " << fragment;
  EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kUnimplemented)
      << s;
  const std::string msg(s.message());
  EXPECT_NE(msg.find("MatMulNBits"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(MatMulNBitsErrors, WellFormedNodeRuns) {
  EXPECT_TRUE(RunNode(NodeSpec{}).ok());
  NodeSpec flat;
  flat.scales_shape = {16};
  flat.zp_shape = {8};  // ceil(2 blocks · 4 bits / 8) = 1 byte per row, flat
  flat.bias_shape = {8};
  EXPECT_TRUE(RunNode(flat).ok());
}

TEST(MatMulNBitsErrors, PackedWeightsOfTheWrongShape) {
  NodeSpec n;
  n.b_shape = {8, 2, 32};  // blob of 8-bit weights for a 4-bit node
  ExpectRefused(n, "input 'B' has shape [8, 2, 32]");
  n.b_shape = {8, 64};
  ExpectRefused(n, "input 'B'");
}

TEST(MatMulNBitsErrors, ScaleAndZeroPointShapes) {
  NodeSpec n;
  n.scales_shape = {8, 3};
  ExpectRefused(n, "input 'scales'");
  n = NodeSpec{};
  n.scales_type = ElementType::kFloat16;
  ExpectRefused(n, "input 'scales' is float16");
  n = NodeSpec{};
  n.zp_shape = {8, 2};  // packed 4-bit zero points of 2 blocks take 1 byte per row
  ExpectRefused(n, "input 'zero_points' (packed uint8)");
  n = NodeSpec{};
  n.zp_shape = {8, 2};
  n.zp_type = ElementType::kInt32;
  ExpectRefused(n, "input 'zero_points' is int32");
  n = NodeSpec{};
  n.bias_shape = {9};
  ExpectRefused(n, "input 'bias'");
}

TEST(MatMulNBitsErrors, BitsAndBlockSizesTheOpDoesNotAllow) {
  NodeSpec n;
  n.bits = 3;
  ExpectRefused(n, "attribute 'bits' is 3");
  n = NodeSpec{};
  n.block = 24;
  ExpectRefused(n, "attribute 'block_size' is 24");
  n.block = 8;
  ExpectRefused(n, "attribute 'block_size' is 8");
  n = NodeSpec{};
  n.level = 5;
  ExpectRefused(n, "attribute 'accuracy_level' is 5");
}

TEST(MatMulNBitsErrors, KAndNDisagreeingWithTheTensors) {
  NodeSpec n;
  n.k = 96;  // B holds 2 blocks of 32, K = 96 needs 3
  ExpectRefused(n, "input 'B'");
  n = NodeSpec{};
  n.n = 9;
  ExpectRefused(n, "input 'B'");
  n = NodeSpec{};
  n.k = 0;
  ExpectRefused(n, "attribute 'K' is 0");
  n = NodeSpec{};
  n.a_shape = {2, 63};
  ExpectRefused(n, "input 'A'");
}

TEST(MatMulNBitsErrors, GroupIndexIsRefused) {
  NodeSpec n;
  n.g_idx = true;
  ExpectRefused(n, "input 'g_idx'");
}

}  // namespace
}  // namespace attune::testing
