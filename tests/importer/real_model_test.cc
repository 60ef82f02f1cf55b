// The example models on main: the external-data model loads its weights correctly.
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tests/common/paths.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

// models/external_data is y = x·W + b with W and b in weights.bin. Recomputing y
// from the imported constants and comparing with the reference output proves the
// weights were read from the right offsets.
TEST(RealModelTest, ExternalDataModelImportsItsWeights) {
  const std::string folder = SourceDir() + "/models/external_data";
  auto g = ImportModelFromFile(folder + "/model.onnx");
  ASSERT_TRUE(g.ok()) << g.status();
  const Graph& graph = **g;
  EXPECT_EQ(graph.OpsetFor(""), 17);
  ASSERT_EQ(graph.inputs().size(), 1u);
  EXPECT_EQ(SymbolicShapeToString(*graph.inputs()[0]->shape()), "[batch, seq, 64]");

  const Tensor* w = nullptr;
  const Tensor* b = nullptr;
  for (const Node* n : graph.nodes())
    for (const Value* in : n->inputs())
      if (in && in->is_constant()) (n->op_type() == "MatMul" ? w : b) = in->constant();
  ASSERT_NE(w, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(w->shape(), (std::vector<int64_t>{64, 64}));
  ASSERT_EQ(b->shape(), (std::vector<int64_t>{64}));

  const NpyFloat x = ReadNpyFloat32(folder + "/inputs/x.npy");
  const NpyFloat y = ReadNpyFloat32(folder + "/outputs/y.npy");
  ASSERT_EQ(x.shape, (std::vector<int64_t>{2, 7, 64}));
  ASSERT_EQ(y.values.size(), x.values.size());
  double worst = 0;
  for (int row = 0; row < 14; ++row) {
    for (int j = 0; j < 64; ++j) {
      double acc = b->data<float>()[j];
      for (int k = 0; k < 64; ++k) acc += double(x.values[row * 64 + k]) * w->data<float>()[k * 64 + j];
      worst = std::max(worst, std::abs(acc - y.values[row * 64 + j]));
    }
  }
  EXPECT_LT(worst, 1e-4);
}

TEST(RealModelTest, ExternalDataModelFromBytesNeedsItsFolder) {
  const std::string folder = SourceDir() + "/models/external_data";
  const std::string bytes = ReadFile(folder + "/model.onnx");
  EXPECT_TRUE(HasError(ImportModelFromBytes(bytes, "").status(), absl::StatusCode::kInvalidArgument,
                       {"initializer", "weights.bin", "not loaded from a folder"}));
  EXPECT_TRUE(ImportModelFromBytes(bytes, folder).ok());
}

}  // namespace
}  // namespace attune::testing
