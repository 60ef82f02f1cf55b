// join_unrolled_repeat: torch's unrolled repeat_interleave (Split into pieces
// of one, each Unsqueezed, Expanded and Reshaped, then Concatenated) becomes
// the one repeat it computes on the whole tensor; anything that would not give
// the same elements, or the same failures, is left as it is.
#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

struct Unrolled {
  std::vector<int64_t> split = {1, 1};  // the Split's sizes along the heads axis (1)
  std::vector<int64_t> expand_to = {2, 1, 3, 5, 4};
  std::vector<int64_t> view = {2, -1, 5, 4};
  bool piece_read_twice = false;
};

// Keys (2, 2, 5, 4) repeated 3 times on the heads axis as torch 1.13 writes
// k.repeat_interleave(3, dim=1) with every dim known.
std::unique_ptr<Graph> UnrolledRepeat(const Unrolled& u) {
  GraphBuilder b(17);
  Value* k = b.Input("k", kF32, Dims({2, 2, 5, 4}));
  auto pieces = b.Nodes("Split", {k, b.Constant("sizes", Int64s(u.split))}, static_cast<int>(u.split.size()),
                        Attrs({{"axis", int64_t{1}}}));
  std::vector<Value*> repeated;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Value* unsqueezed = b.Node("Unsqueeze", {pieces[i], b.Constant("axes" + std::to_string(i), Int64s({2}))});
    Value* expanded = b.Node("Expand", {unsqueezed, b.Constant("to" + std::to_string(i), Int64s(u.expand_to))});
    repeated.push_back(b.Node("Reshape", {expanded, b.Constant("view" + std::to_string(i), Int64s(u.view))}));
  }
  b.Output(b.Node("Concat", repeated, Attrs({{"axis", int64_t{1}}})));
  if (u.piece_read_twice) b.Output(b.Node("Relu", {pieces[0]}));
  return BuildWithShapes(b, *MakeShapeInferencePass());
}

// Whether the pass joins the repeat; when it does, the outputs keep their elements.
bool Joins(const Unrolled& u) {
  auto probe = UnrolledRepeat(u);
  auto changed = RunPass(*MakeJoinUnrolledRepeatPass(), *probe);
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (!changed.ok() || !*changed) return false;
  auto graph = UnrolledRepeat(u);
  EXPECT_TRUE(RunPassKeepingOutputs(*MakeJoinUnrolledRepeatPass(), *graph, {PseudoRandom({2, 2, 5, 4}, 1)}, 0.0));
  EXPECT_EQ(CountOps(*graph, "Split"), 0);
  EXPECT_EQ(CountOps(*graph, "Concat"), 0);
  EXPECT_EQ(CountOps(*graph, "Expand"), 1);
  return true;
}

TEST(CanonJoinUnrolledRepeat, JoinsTorchsUnrolledRepeatInterleave) {
  EXPECT_TRUE(Joins({}));
  EXPECT_TRUE(Joins({.view = {0, -1, 5, 4}}));  // the batch copied: the same dim in both forms
}

TEST(CanonJoinUnrolledRepeat, LeavesWhatWouldNotBeTheSame) {
  // A piece read elsewhere too.
  EXPECT_FALSE(Joins({.piece_read_twice = true}));
  // Pieces of two: each repeats a pair of heads, not one.
  EXPECT_FALSE(Joins({.split = {2}, .expand_to = {2, 2, 3, 5, 4}}));
  // The pieces expanded along the split axis: a 1 there becomes 2 per piece, not the whole's 2 heads.
  EXPECT_FALSE(Joins({.expand_to = {2, 2, 3, 5, 4}, .view = {2, -1, 5, 4}}));
  // A dim after the repeated one copied by 0: each piece copies the repeat count there.
  EXPECT_FALSE(Joins({.view = {2, -1, 5, 0}}));
  // The count written out (3) rather than -1: the whole needs 6.
  EXPECT_FALSE(Joins({.view = {2, 3, 5, 4}}));
}

}  // namespace
}  // namespace attune::testing
