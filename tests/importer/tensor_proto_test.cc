// .pb tensor files: the backend tests' data, round trips, and refusals.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "importer/tensor_proto.h"
#include "tests/common/paths.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::TensorProto;

std::string BackendFile(const std::string& relative) {
  return BackendNodeDir() + "/" + relative;
}

// Reference numbers read with the onnx Python package's numpy_helper.
TEST(TensorProtoTest, BackendTestFiles) {
  ATTUNE_SKIP_WITHOUT_BACKEND_DATA();
  auto x = TensorFromProtoBytes(ReadFile(BackendFile("test_abs/test_data_set_0/input_0.pb")));
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_EQ(x->type(), ElementType::kFloat32);
  EXPECT_EQ(x->shape(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_FLOAT_EQ(x->data<float>()[0], 1.764052391052246f);
  EXPECT_FLOAT_EQ(x->data<float>()[3], 2.2408931255340576f);

  auto indices = TensorFromProtoBytes(ReadFile(BackendFile("test_gather_0/test_data_set_0/input_1.pb")));
  ASSERT_TRUE(indices.ok()) << indices.status();
  EXPECT_EQ(indices->type(), ElementType::kInt64);
  EXPECT_EQ(std::vector<int64_t>(indices->values<int64_t>().begin(), indices->values<int64_t>().end()),
            (std::vector<int64_t>{0, 1, 3}));

  auto half = TensorFromProtoBytes(ReadFile(BackendFile("test_cast_FLOAT_to_FLOAT16/test_data_set_0/output_0.pb")));
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->type(), ElementType::kFloat16);
  // The two data sets draw different random inputs for this test (the ONNX 1.12
  // values read from the raw bytes with a separate protobuf walk).
  const bool newer_set = FindBackendData().set == BackendData::Set::kOnnx122;
  EXPECT_EQ(half->data<Float16>()[0].bits, newer_set ? 14250 : 14436);
  EXPECT_EQ(half->data<Float16>()[3].bits, newer_set ? 14990 : 14428);
}

TEST(TensorProtoTest, RoundTrip) {
  Tensor f = *Tensor::FromVector<float>({2, 3}, {1, -2, 3.5f, 0, 1e-30f, 7});
  auto bytes = TensorToProtoBytes(f, "f");
  ASSERT_TRUE(bytes.ok());
  TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  EXPECT_EQ(proto.name(), "f");
  EXPECT_EQ(proto.data_type(), TensorProto::FLOAT);
  EXPECT_EQ(proto.raw_data().size(), 24u);
  auto back = TensorFromProtoBytes(*bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape(), f.shape());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back->data<float>()[i], f.data<float>()[i]);

  Tensor b = *Tensor::FromVector<bool>({3}, {true, false, true});
  auto b_back = TensorFromProtoBytes(*TensorToProtoBytes(b, "b"));
  ASSERT_TRUE(b_back.ok());
  EXPECT_EQ(b_back->type(), ElementType::kBool);
  EXPECT_EQ(b_back->data<uint8_t>()[2], 1);

  Tensor scalar = Tensor::Scalar<int64_t>(-5);
  auto s_back = TensorFromProtoBytes(*TensorToProtoBytes(scalar, ""));
  ASSERT_TRUE(s_back.ok());
  EXPECT_EQ(s_back->rank(), 0);
  EXPECT_EQ(s_back->data<int64_t>()[0], -5);
}

TEST(TensorProtoTest, TypedFields) {
  TensorProto proto;
  proto.set_name("d");
  proto.set_data_type(TensorProto::DOUBLE);
  proto.add_dims(2);
  proto.add_double_data(0.5);
  proto.add_double_data(-1.25);
  auto t = TensorFromProtoBytes(proto.SerializeAsString());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<double>()[1], -1.25);
}

TEST(TensorProtoTest, Refusals) {
  EXPECT_TRUE(HasError(TensorFromProtoBytes("\xff\xff\xff garbage").status(), absl::StatusCode::kInvalidArgument,
                       {"not a valid ONNX TensorProto"}));
  EXPECT_TRUE(HasError(TensorFromProtoBytes("").status(), absl::StatusCode::kInvalidArgument,
                       {"not a valid ONNX TensorProto"}));

  TensorProto external;
  external.set_name("w");
  external.set_data_type(TensorProto::FLOAT);
  external.add_dims(1);
  external.set_data_location(TensorProto::EXTERNAL);
  auto* loc = external.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  EXPECT_TRUE(HasError(TensorFromProtoBytes(external.SerializeAsString()).status(), absl::StatusCode::kInvalidArgument,
                       {"tensor 'w'", "not loaded from a folder"}));

  TensorProto strings;
  strings.set_data_type(TensorProto::STRING);
  strings.add_dims(1);
  strings.add_string_data("hi");
  EXPECT_TRUE(HasError(TensorFromProtoBytes(strings.SerializeAsString()).status(), absl::StatusCode::kUnimplemented,
                       {"tensor", "string"}));

  TensorProto big;
  big.set_name("big");
  big.set_data_type(TensorProto::FLOAT);
  big.add_dims(1000);
  big.set_raw_data(std::string(4000, '\0'));
  ImportOptions options;
  options.max_tensor_bytes = 1000;
  EXPECT_TRUE(HasError(TensorFromProtoBytes(big.SerializeAsString(), options).status(),
                       absl::StatusCode::kResourceExhausted, {"tensor 'big'", "size limit"}));
  big.set_raw_data(std::string(3999, '\0'));
  EXPECT_TRUE(HasError(TensorFromProtoBytes(big.SerializeAsString()).status(), absl::StatusCode::kInvalidArgument,
                       {"tensor 'big'", "raw_data holds 3999 bytes"}));

  EXPECT_FALSE(TensorToProtoBytes(Tensor(), "empty").ok());
}

}  // namespace
}  // namespace attune::testing
