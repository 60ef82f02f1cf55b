// Selection, indexing, loss and window ops against references written from
// ONNX's definitions: TopK (ties in index order, smallest, NaN largest),
// Hardmax (both opset meanings), GatherND with batch_dims, OneHot with
// negative indices, Compress, NonZero, Unique (sorted and not, with an
// axis), EyeLike, CumProd, the class losses (weights, ignore_index, every
// reduction, log_prob), and the Hann, Hamming and Blackman windows.
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/ops/op_test_util.h"

namespace attune::testing {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

TEST(SelectTest, TopK) {
  const Tensor x = F32({2, 4}, {3, 1, 3, NAN, 0, 2, 2, -1});
  auto out = RunOp("TopK", 11, {}, {x, I64({1}, {2})}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan((*out)[0].data<float>()[0]));
  EXPECT_EQ((*out)[0].data<float>()[1], 3);
  EXPECT_EQ(Values<int64_t>((*out)[1]), (Ints{3, 0, 1, 2}));
  auto smallest = RunOp("TopK", 11, Attrs({{"largest", int64_t{0}}, {"axis", int64_t{0}}}), {x, I64({1}, {1})}, 2);
  ASSERT_TRUE(smallest.ok()) << smallest.status();
  EXPECT_EQ(Values<float>((*smallest)[0]), (Floats{0, 1, 2, -1}));
  auto bad = RunOp("TopK", 11, {}, {x, I64({1}, {5})}, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "TopK node 'test_node'") && MessageHas(bad.status(), "K")) << bad.status();
}

TEST(SelectTest, Hardmax) {
  const Tensor x = F32({2, 3}, {1, 3, 3, 5, 0, 5});
  EXPECT_EQ(Values<float>(Run1("Hardmax", 13, {}, {x})), (Floats{0, 1, 0, 1, 0, 0}));
  EXPECT_EQ(Values<float>(Run1("Hardmax", 13, Attrs({{"axis", int64_t{0}}}), {x})), (Floats{0, 1, 0, 1, 0, 1}));
  // Opset 11, axis 0: one line over all six.
  EXPECT_EQ(Values<float>(Run1("Hardmax", 11, Attrs({{"axis", int64_t{0}}}), {x})), (Floats{0, 0, 0, 1, 0, 0}));
}

TEST(SelectTest, GatherNDOneHotCompressNonZero) {
  const Tensor data = Iota({2, 2, 3});
  EXPECT_EQ(Values<float>(Run1("GatherND", 13, {}, {data, I64({2, 2}, {1, 0, 0, -1})})),
            (Floats{6, 7, 8, 3, 4, 5}));
  EXPECT_EQ(Values<float>(Run1("GatherND", 13, Attrs({{"batch_dims", int64_t{1}}}), {data, I64({2, 1}, {1, 0})})),
            (Floats{3, 4, 5, 6, 7, 8}));
  auto bad = RunOp("GatherND", 13, {}, {data, I64({1, 1}, {2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "indices")) << bad.status();
  EXPECT_EQ(Values<float>(Run1("OneHot", 11, {}, {I64({3}, {0, -1, 7}), F32({}, {3}), F32({2}, {0, 5})})),
            (Floats{5, 0, 0, 0, 0, 5, 0, 0, 0}));
  auto b = Tensor::Create(ElementType::kBool, {3});
  ASSERT_TRUE(b.ok());
  b->data<uint8_t>()[0] = 1;
  b->data<uint8_t>()[2] = 1;
  EXPECT_EQ(Values<float>(Run1("Compress", 11, Attrs({{"axis", int64_t{2}}}), {data, *b})),
            (Floats{0, 2, 3, 5, 6, 8, 9, 11}));
  const Tensor nz = Run1("NonZero", 13, {}, {F32({2, 2}, {0, 1, 2, 0})});
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  EXPECT_EQ(Values<int64_t>(nz), (Ints{0, 1, 1, 0}));
}

TEST(SelectTest, UniqueEyeLikeCumProd) {
  auto out = RunOp("Unique", 11, {}, {F32({6}, {2, 1, 1, 3, 4, 3})}, 4);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (Floats{1, 2, 3, 4}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (Ints{1, 0, 3, 4}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (Ints{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[3]), (Ints{2, 1, 2, 1}));
  auto unsorted = RunOp("Unique", 11, Attrs({{"sorted", int64_t{0}}}), {F32({6}, {2, 1, 1, 3, 4, 3})}, 1);
  ASSERT_TRUE(unsorted.ok());
  EXPECT_EQ(Values<float>((*unsorted)[0]), (Floats{2, 1, 3, 4}));
  auto rows = RunOp("Unique", 11, Attrs({{"axis", int64_t{0}}}), {F32({3, 2}, {1, 0, 0, 1, 1, 0})}, 1);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(Values<float>((*rows)[0]), (Floats{0, 1, 1, 0}));
  EXPECT_EQ(Values<float>(Run1("EyeLike", 9, Attrs({{"k", int64_t{1}}}), {F32({2, 3}, {9, 9, 9, 9, 9, 9})})),
            (Floats{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(Values<float>(Run1("CumProd", 26, Attrs({{"exclusive", int64_t{1}}}), {F32({4}, {2, 3, 4, 5}), I64({}, {0})})),
            (Floats{1, 2, 6, 24}));
}

TEST(LossTest, NegativeLogLikelihoodAndSoftmaxCrossEntropy) {
  const Floats x = {-1, -2, -3, -0.5f, -4, -0.25f};  // [N=2, C=3]
  const Tensor in = F32({2, 3}, x), target = I64({2}, {2, 0}), w = F32({3}, {0.5f, 1, 2});
  EXPECT_EQ(Values<float>(Run1("NegativeLogLikelihoodLoss", 13, Attrs({{"reduction", std::string("none")}}),
                               {in, target})),
            (Floats{3, 0.5f}));
  EXPECT_FLOAT_EQ(Run1("NegativeLogLikelihoodLoss", 13, {}, {in, target, w}).data<float>()[0],
                  (3 * 2 + 0.5f * 0.5f) / 2.5f);
  EXPECT_FLOAT_EQ(Run1("NegativeLogLikelihoodLoss", 13, Attrs({{"ignore_index", int64_t{2}}}), {in, target})
                      .data<float>()[0],
                  0.5f);
  EXPECT_FLOAT_EQ(Run1("NegativeLogLikelihoodLoss", 13, Attrs({{"reduction", std::string("sum")}}), {in, target})
                      .data<float>()[0],
                  3.5f);
  auto sce = RunOp("SoftmaxCrossEntropyLoss", 13, Attrs({{"reduction", std::string("none")}}), {in, target}, 2);
  ASSERT_TRUE(sce.ok()) << sce.status();
  for (int n = 0; n < 2; ++n) {
    double sum = 0;
    for (int c = 0; c < 3; ++c) sum += std::exp(static_cast<double>(x[n * 3 + c]));
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR((*sce)[1].data<float>()[n * 3 + c], x[n * 3 + c] - std::log(sum), 1e-6);
    const int t = n == 0 ? 2 : 0;
    EXPECT_NEAR((*sce)[0].data<float>()[n], -(x[n * 3 + t] - std::log(sum)), 1e-6);
  }
  auto bad = RunOp("NegativeLogLikelihoodLoss", 13, {}, {in, I64({2}, {3, 0})});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(MessageHas(bad.status(), "target")) << bad.status();
}

TEST(SignalTest, Windows) {
  for (int64_t periodic : {0, 1}) {
    const double n = periodic ? 8 : 7;
    const Tensor hann = Run1("HannWindow", 17, Attrs({{"periodic", periodic}}), {I64({}, {8})});
    const Tensor hamming = Run1("HammingWindow", 17, Attrs({{"periodic", periodic}}), {I64({}, {8})});
    const Tensor blackman = Run1("BlackmanWindow", 17, Attrs({{"periodic", periodic}}), {I64({}, {8})});
    for (int i = 0; i < 8; ++i) {
      const double a = 2 * std::numbers::pi * i / n;
      EXPECT_NEAR(hann.data<float>()[i], std::pow(std::sin(std::numbers::pi * i / n), 2), 1e-6);
      EXPECT_NEAR(hamming.data<float>()[i], 25.0 / 46 - 21.0 / 46 * std::cos(a), 1e-6);
      EXPECT_NEAR(blackman.data<float>()[i], 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a), 1e-6);
    }
  }
}

}  // namespace
}  // namespace attune::testing
