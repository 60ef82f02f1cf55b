// RunInto computes outputs in the caller's buffers when it can and copies when
// it cannot; Run reads inputs in place.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attune/session.h"
#include "engine/session_access.h"
#include "gtest/gtest.h"
#include "tests/api/model_inputs.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::unique_ptr<Session> Load(const std::string& path, SessionOptions options = {}) {
  auto session = Session::Create(path, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

// y = x + x (computed by a kernel), v = Reshape(x, [3, 2]) (a view of x).
std::unique_ptr<Session> AddAndReshapeModel() {
  onnx::ModelProto m = MinimalModel(17);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  AddOutput(m, "v", onnx::TensorProto::FLOAT, {int64_t{3}, int64_t{2}});
  AddInitializer(m, "shape", onnx::TensorProto::INT64, {2})->set_raw_data(RawBytes<int64_t>({3, 2}));
  AddNode(m, "Add", {"x", "x"}, {"y"}, "add");
  AddNode(m, "Reshape", {"x", "shape"}, {"v"}, "reshape");
  auto session = Session::CreateFromBytes(Serialize(m));
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

// The mha_causal model, its sample input and the output Run gives for it.
class ZeroCopyMhaCausalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session = Load(MhaCausalDir() + "/model.onnx");
    ASSERT_NE(session, nullptr);
    x = ReadMhaCausalInput();
    auto reference = session->Run({{"x", x}});
    ASSERT_TRUE(reference.ok()) << reference.status();
    expected = (*reference)[0].second;
  }
  std::unique_ptr<Session> session;
  Tensor x;
  Tensor expected;
};

TEST_F(ZeroCopyMhaCausalTest, RunIntoWritesTheOutputStraightIntoTheCallersBuffer) {

  std::vector<float> y(expected.num_elements(), kNaN);
  auto buffer = Tensor::Borrow(TensorView{ElementType::kFloat32, expected.shape(), y.data()});
  ASSERT_TRUE(buffer.ok());
  const std::vector<Tensor> buffers = {*buffer};
  auto out = GetSessionImpl(*session).Run({{"x", x}}, nullptr, &buffers);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].second.raw_data(), y.data()) << "the output was computed elsewhere";
  EXPECT_EQ(std::memcmp(y.data(), expected.raw_data(), expected.byte_size()), 0);

  // The public call gives the same bits, and they are PyTorch's within tolerance.
  std::fill(y.begin(), y.end(), kNaN);
  ASSERT_TRUE(session->RunInto({{"x", x}}, {{"y", TensorView{ElementType::kFloat32, expected.shape(), y.data()}}}).ok());
  EXPECT_EQ(std::memcmp(y.data(), expected.raw_data(), expected.byte_size()), 0);
  auto torch = ReadNpyFile(MhaCausalDir() + "/outputs/y.npy");
  ASSERT_TRUE(torch.ok());
  ASSERT_EQ(torch->num_elements(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], torch->data<float>()[i], 1e-4) << "element " << i;
}

TEST_F(ZeroCopyMhaCausalTest, MisalignedBufferFallsBackToACopy) {

  std::vector<char> storage(expected.byte_size() + 8);
  void* misaligned = storage.data() + 1;
  const TensorView view{ElementType::kFloat32, expected.shape(), misaligned};
  auto buffer = Tensor::Borrow(view);
  ASSERT_TRUE(buffer.ok());
  const std::vector<Tensor> buffers = {*buffer};
  auto out = GetSessionImpl(*session).Run({{"x", x}}, nullptr, &buffers);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[0].second.raw_data(), misaligned);

  ASSERT_TRUE(session->RunInto({{"x", x}}, {{"y", view}}).ok());
  EXPECT_EQ(std::memcmp(misaligned, expected.raw_data(), expected.byte_size()), 0);
}

TEST(ZeroCopyTest, InputsAreReadInPlaceAndViewsOfThemAreCopiedOut) {
  auto session = AddAndReshapeModel();
  ASSERT_NE(session, nullptr);
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const NamedTensors inputs = {{"x", BorrowFloats(x, {2, 3})}};

  auto out = session->Run(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[1].first, "v");
  EXPECT_EQ((*out)[1].second.raw_data(), x.data()) << "Run copied its input";
  EXPECT_EQ((*out)[1].second.shape(), (std::vector<int64_t>{3, 2}));

  std::vector<float> y(6, kNaN), v(6, kNaN);
  const std::vector<Tensor> buffers = {BorrowFloats(y, {2, 3}), BorrowFloats(v, {3, 2})};
  auto direct = GetSessionImpl(*session).Run(inputs, nullptr, &buffers);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ((*direct)[0].second.raw_data(), y.data());  // Add's output lives in y
  EXPECT_EQ((*direct)[1].second.raw_data(), x.data());  // v stays a view of x
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, 8, 10, 12}));

  std::fill(y.begin(), y.end(), kNaN);
  ASSERT_TRUE(session->RunInto(inputs, {{"v", TensorView{ElementType::kFloat32, {3, 2}, v.data()}},
                                        {"y", TensorView{ElementType::kFloat32, {2, 3}, y.data()}}})
                  .ok());
  EXPECT_EQ(v, x);  // copied out of the input
  EXPECT_EQ(y, (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(x, (std::vector<float>{1, 2, 3, 4, 5, 6}));  // the input is untouched
}

TEST(ZeroCopyTest, WritingIntoAnOutputThatIsAConstantLeavesTheModelAlone) {
  onnx::ModelProto m = MinimalModel(17);
  AddInput(m, "x", onnx::TensorProto::FLOAT, {int64_t{2}});
  AddOutput(m, "w", onnx::TensorProto::FLOAT, {int64_t{2}});
  AddOutput(m, "y", onnx::TensorProto::FLOAT, {int64_t{2}});
  AddInitializer(m, "w", onnx::TensorProto::FLOAT, {2})->set_raw_data(RawBytes<float>({7, 8}));
  AddNode(m, "Add", {"x", "w"}, {"y"}, "add");
  auto session = Session::CreateFromBytes(Serialize(m));
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<float> x = {1, 2};
  const NamedTensors inputs = {{"x", BorrowFloats(x, {2})}};

  auto first = (*session)->Run(inputs);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ((*first)[0].first, "w");
  Tensor w = (*first)[0].second;
  EXPECT_EQ(std::vector<float>(w.values<float>().begin(), w.values<float>().end()), (std::vector<float>{7, 8}));
  w.data<float>()[0] = -100;  // the caller owns its results

  auto second = (*session)->Run(inputs);
  ASSERT_TRUE(second.ok()) << second.status();
  const Tensor& w2 = (*second)[0].second;
  const Tensor& y2 = (*second)[1].second;
  EXPECT_EQ(std::vector<float>(w2.values<float>().begin(), w2.values<float>().end()), (std::vector<float>{7, 8}));
  EXPECT_EQ(std::vector<float>(y2.values<float>().begin(), y2.values<float>().end()), (std::vector<float>{8, 10}));
}

TEST(ZeroCopyTest, RunIntoRejectsBuffersThatDoNotFit) {
  auto session = AddAndReshapeModel();
  ASSERT_NE(session, nullptr);
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const NamedTensors inputs = {{"x", BorrowFloats(x, {2, 3})}};
  std::vector<float> y(6);
  std::vector<int32_t> wrong_type(6);

  EXPECT_TRUE(HasError(session->RunInto(inputs, {{"y", TensorView{ElementType::kFloat32, {3, 2}, y.data()}}}),
                       absl::StatusCode::kInvalidArgument, {"output 'y' is float32[2, 3]", "float32[3, 2]"}));
  EXPECT_TRUE(HasError(session->RunInto(inputs, {{"y", TensorView{ElementType::kInt32, {2, 3}, wrong_type.data()}}}),
                       absl::StatusCode::kInvalidArgument, {"output 'y'", "int32"}));
  EXPECT_TRUE(HasError(session->RunInto(inputs, {{"z", TensorView{ElementType::kFloat32, {2, 3}, y.data()}}}),
                       absl::StatusCode::kInvalidArgument, {"no output 'z'"}));
  EXPECT_TRUE(HasError(session->RunInto(inputs, {{"y", TensorView{ElementType::kFloat32, {2, 3}, y.data()}},
                                                 {"y", TensorView{ElementType::kFloat32, {2, 3}, y.data()}}}),
                       absl::StatusCode::kInvalidArgument, {"'y' is given twice"}));
  EXPECT_TRUE(HasError(session->RunInto(inputs, {{"y", TensorView{ElementType::kFloat32, {2, 3}, nullptr}}}),
                       absl::StatusCode::kInvalidArgument, {"output buffer for 'y'"}));
}

TEST(ZeroCopyTest, RunLeavesTheCallersOpenMpSettingAlone) {
  SessionOptions options;
  options.threads = 1;
  auto session = Load(MhaCausalDir() + "/model.onnx", options);
  ASSERT_NE(session, nullptr);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(3);
  EXPECT_TRUE(session->Run({{"x", ReadMhaCausalInput()}}).ok());
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace attune::testing
