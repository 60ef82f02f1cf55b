// torch's repeat_interleave over a dynamic dim, written by torch.onnx as a Loop
// over sequences, is read back as Unsqueeze, Expand and Reshape; a Loop that
// differs from that emission in anything the result depends on is left as it
// is (and refused by the importer, which runs no Loop).
#include "importer/torch_repeat_interleave.h"

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

onnx::ModelProto GptjDynamic() {
  std::ifstream in(testing::SourceDir() + "/models/hf_gptj_prefill_dynamic/model.onnx", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes.str()));
  return model;
}

int Count(const onnx::GraphProto& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.node()) n += node.op_type() == op;
  return n;
}

onnx::NodeProto* Find(onnx::GraphProto* g, const std::function<bool(const onnx::NodeProto&)>& match) {
  for (auto& node : *g->mutable_node())
    if (match(node)) return &node;
  return nullptr;
}

onnx::GraphProto* FirstBody(onnx::ModelProto& m) {
  onnx::NodeProto* loop = Find(m.mutable_graph(), [](const onnx::NodeProto& n) { return n.op_type() == "Loop"; });
  return loop == nullptr ? nullptr : loop->mutable_attribute(0)->mutable_g();
}

// The value of a Constant node's int64 tensor, replaced.
void SetConstant(onnx::NodeProto* constant, const std::vector<int64_t>& values) {
  onnx::TensorProto* t = constant->mutable_attribute(0)->mutable_t();
  t->clear_raw_data();
  t->clear_int64_data();
  t->clear_dims();
  if (values.size() != 1) t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

// Replaces the Constant that the first Loop body's `op` reads as its second input.
bool SetBodyConstant(onnx::ModelProto& m, const std::string& op, const std::vector<int64_t>& values) {
  onnx::GraphProto* body = FirstBody(m);
  onnx::NodeProto* reader = Find(body, [&](const onnx::NodeProto& n) { return n.op_type() == op; });
  if (reader == nullptr || reader->input_size() < 2) return false;
  onnx::NodeProto* constant = Find(body, [&](const onnx::NodeProto& n) { return n.output(0) == reader->input(1); });
  if (constant == nullptr || constant->op_type() != "Constant") return false;
  SetConstant(constant, values);
  return true;
}

TEST(TorchRepeatInterleave, ReadsTorchsLoopsAsTheOpsTheyCompute) {
  onnx::ModelProto m = GptjDynamic();
  ASSERT_EQ(Count(m.graph(), "Loop"), 2);
  auto rewritten = importer::RewriteTorchRepeatInterleave(m.mutable_graph(), 17);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_EQ(*rewritten, 2);
  for (const char* op : {"Loop", "SequenceEmpty", "SplitToSequence", "ConcatFromSequence"})
    EXPECT_EQ(Count(m.graph(), op), 0) << op;
  EXPECT_EQ(Count(m.graph(), "Unsqueeze") >= 2, true);
  auto graph = ImportModelFromBytes(m.SerializeAsString(), "");
  EXPECT_TRUE(graph.ok()) << graph.status();
  // Nothing else to do the second time.
  EXPECT_EQ(*importer::RewriteTorchRepeatInterleave(m.mutable_graph(), 17), 0);
}

// Each change makes the first Loop compute something else than
// repeat_interleave (or fail differently): it must stay, so that the model is
// refused rather than run as something it is not.
TEST(TorchRepeatInterleave, LeavesEveryOtherLoop) {
  const std::vector<std::pair<std::string, std::function<bool(onnx::ModelProto&)>>> changes = {
      {"repeats of two values",
       [](onnx::ModelProto& m) {
         onnx::GraphProto* g = m.mutable_graph();
         // The repeats: the Expand feeding the second SplitToSequence reads a Constant.
         for (auto& split : *g->mutable_node()) {
           if (split.op_type() != "SplitToSequence") continue;
           onnx::NodeProto* expand =
               Find(g, [&](const onnx::NodeProto& n) { return n.output(0) == split.input(0) && n.op_type() == "Expand"; });
           if (expand == nullptr) continue;
           onnx::NodeProto* r =
               Find(g, [&](const onnx::NodeProto& n) { return n.output(0) == expand->input(0) && n.op_type() == "Constant"; });
           if (r == nullptr) return false;
           SetConstant(r, {2, 3});
           return true;
         }
         return false;
       }},
      {"a trip count of another dim",
       [](onnx::ModelProto& m) {
         onnx::GraphProto* g = m.mutable_graph();
         onnx::NodeProto* loop = Find(g, [](const onnx::NodeProto& n) { return n.op_type() == "Loop"; });
         onnx::NodeProto* unsqueeze =
             Find(g, [&](const onnx::NodeProto& n) { return n.output(0) == loop->input(0); });
         onnx::NodeProto* gather =
             unsqueeze == nullptr ? nullptr : Find(g, [&](const onnx::NodeProto& n) { return n.output(0) == unsqueeze->input(0); });
         onnx::NodeProto* index =
             gather == nullptr ? nullptr : Find(g, [&](const onnx::NodeProto& n) { return n.output(0) == gather->input(1); });
         if (index == nullptr || index->op_type() != "Constant") return false;
         SetConstant(index, {1});
         return true;
       }},
      {"a condition that is false",
       [](onnx::ModelProto& m) {
         onnx::GraphProto* g = m.mutable_graph();
         onnx::NodeProto* loop = Find(g, [](const onnx::NodeProto& n) { return n.op_type() == "Loop"; });
         onnx::NodeProto* cond = Find(g, [&](const onnx::NodeProto& n) { return n.output(0) == loop->input(1); });
         if (cond == nullptr || cond->op_type() != "Constant") return false;
         onnx::TensorProto* t = cond->mutable_attribute(0)->mutable_t();
         t->clear_raw_data();
         t->clear_int32_data();
         t->add_int32_data(0);
         return true;
       }},
      {"the slice unsqueezed on another axis",
       [](onnx::ModelProto& m) { return SetBodyConstant(m, "Unsqueeze", {1}); }},
      {"each slice read at index 0",
       [](onnx::ModelProto& m) {
         onnx::GraphProto* body = FirstBody(m);
         onnx::NodeProto* at = Find(body, [](const onnx::NodeProto& n) { return n.op_type() == "SequenceAt"; });
         if (at == nullptr) return false;
         onnx::NodeProto* zero = body->add_node();
         zero->set_op_type("Constant");
         zero->add_output("zero_index");
         auto* value = zero->add_attribute();
         value->set_name("value");
         value->set_type(onnx::AttributeProto::TENSOR);
         value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
         value->mutable_t()->add_int64_data(0);
         at->set_input(1, "zero_index");
         return true;
       }},
      {"a reshape that copies a dim after the repeated one",
       [](onnx::ModelProto& m) { return SetBodyConstant(m, "Reshape", {0, 0, 0, -1, 0}); }},
  };
  for (const auto& [what, change] : changes) {
    onnx::ModelProto m = GptjDynamic();
    ASSERT_TRUE(change(m)) << what << ": the model no longer has the form this test changes";
    auto rewritten = importer::RewriteTorchRepeatInterleave(m.mutable_graph(), 17);
    ASSERT_TRUE(rewritten.ok()) << what;
    EXPECT_LT(*rewritten, 2) << what;  // the other Loop at most (some changes touch both)
    EXPECT_EQ(Count(m.graph(), "Loop"), 2 - *rewritten) << what;
    auto graph = ImportModelFromBytes(m.SerializeAsString(), "");
    ASSERT_FALSE(graph.ok()) << what;
    EXPECT_TRUE(absl::StrContains(graph.status().message(), "Loop")) << what << ": " << graph.status();
  }
}

}  // namespace
}  // namespace attune
