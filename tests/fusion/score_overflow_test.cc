// Inputs near float32's maximum: where the subgraph's Q·Kᵀ overflows to ±inf
// (and its softmax makes the row NaN), the fused op gives the same NaN and
// inf, though its kernels scale Q before the dot product and would stay
// finite. The multi-query model (one K/V head) from models/, its stored input
// x scaled up decade by decade until the projections themselves overflow:
// fused and unfused agree on every non-finite element, and on the finite ones.
#include <cmath>
#include <string>
#include <vector>

#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/fusion/model_pair.h"

namespace attune::testing {
namespace {

struct Agreement {
  int nonfinite_unfused = 0;
  int nonfinite_mismatch = 0;  // NaN or inf in one output and not the same in the other
  double finite_relative = 0.0;
};

Agreement Compare(const Tensor& unfused, const Tensor& fused) {
  Agreement a;
  const float* u = unfused.data<float>();
  const float* f = fused.data<float>();
  for (int64_t i = 0; i < unfused.num_elements(); ++i) {
    const bool u_finite = std::isfinite(u[i]);
    a.nonfinite_unfused += !u_finite;
    if (!u_finite || !std::isfinite(f[i])) {
      const bool same = (std::isnan(u[i]) && std::isnan(f[i])) || u[i] == f[i];
      a.nonfinite_mismatch += !same;
      continue;
    }
    const double scale = std::max(1.0, std::fabs(static_cast<double>(u[i])));
    a.finite_relative = std::max(a.finite_relative, std::fabs(static_cast<double>(u[i]) - f[i]) / scale);
  }
  return a;
}

TEST(ScoreOverflowTest, FusedGivesTheSubgraphsNaNWhereQKOverflows) {
  const std::string model = "forms_multi_query";
  ModelPair p = LoadModelPair(model);
  ASSERT_NE(p.fused, nullptr);
  ASSERT_EQ(p.report.fusions.size(), 1u);
  auto x = ReadNpyFile((std::filesystem::path(SourceDir()) / "models" / model / "inputs" / "x.npy").string());
  ASSERT_TRUE(x.ok()) << x.status();
  int overflowing_scales = 0;
  for (double scale = 1e15; scale < 1e40; scale *= 10) {
    Tensor scaled = *Tensor::Create(ElementType::kFloat32, x->shape());
    for (int64_t i = 0; i < x->num_elements(); ++i)
      scaled.data<float>()[i] = static_cast<float>(x->data<float>()[i] * scale);
    auto want = RunGraph(*p.unfused, DefaultKernelRegistry(), {scaled});
    auto got = RunGraph(*p.fused, DefaultKernelRegistry(), {scaled});
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    const Agreement a = Compare((*want)[0], (*got)[0]);
    overflowing_scales += a.nonfinite_unfused > 0;
    EXPECT_EQ(a.nonfinite_mismatch, 0) << "x times " << scale << ": " << a.nonfinite_unfused
                                       << " non-finite elements in the unfused output";
    EXPECT_LE(a.finite_relative, 1e-4) << "x times " << scale;
  }
  EXPECT_GT(overflowing_scales, 0) << "no scale made the subgraph overflow: the test would not see the difference";
}

}  // namespace
}  // namespace attune::testing
