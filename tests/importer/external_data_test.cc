// External tensor data: the happy path, and every way a model could reach outside its folder.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::TensorProto;

void SetExternal(TensorProto* t, const std::string& location, const std::string& offset = "",
                 const std::string& length = "") {
  t->set_data_location(TensorProto::EXTERNAL);
  auto add = [t](const std::string& key, const std::string& value) {
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
}

// A model returning a float32[4] initializer "W" stored at `location`.
onnx::ModelProto ExternalModel(const std::string& location, const std::string& offset = "",
                               const std::string& length = "") {
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, "W", TensorProto::FLOAT, {4});
  SetExternal(AddInitializer(m, "W", TensorProto::FLOAT, {4}), location, offset, length);
  return m;
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    model_dir_ = dir_ / "model";
    std::filesystem::create_directories(model_dir_ + "/sub");
    // 8 floats: the tensor is read from offset 16 (values 5..8).
    WriteFile(model_dir_ + "/weights.bin", RawBytes<float>({1, 2, 3, 4, 5, 6, 7, 8}));
    WriteFile(model_dir_ + "/sub/w.bin", RawBytes<float>({9, 10, 11, 12}));
    WriteFile(dir_ / "secret.bin", RawBytes<float>({-1, -1, -1, -1}));
  }

  absl::Status ImportStatus(const onnx::ModelProto& m) { return Import(m, model_dir_).status(); }

  TempDir dir_;
  std::string model_dir_;
};

TEST_F(ExternalDataTest, ReadsTheRangeGivenByOffsetAndLength) {
  auto g = Import(ExternalModel("weights.bin", "16", "16"), model_dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  const Tensor* t = (*g)->FindValue("W")->constant();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(std::vector<float>(t->values<float>().begin(), t->values<float>().end()),
            (std::vector<float>{5, 6, 7, 8}));
}

TEST_F(ExternalDataTest, SubfolderAndMissingLengthAndChecksum) {
  onnx::ModelProto m = ExternalModel("sub/w.bin");
  auto* checksum = m.mutable_graph()->mutable_initializer(0)->add_external_data();
  checksum->set_key("checksum");
  checksum->set_value("0123456789abcdef0123456789abcdef01234567");
  auto g = Import(m, model_dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("W")->constant()->data<float>()[3], 12.0f);
}

TEST_F(ExternalDataTest, ImportFromFileUsesTheModelsFolder) {
  WriteFile(model_dir_ + "/model.onnx", Serialize(ExternalModel("weights.bin", "0", "16")));
  auto g = ImportModelFromFile(model_dir_ + "/model.onnx");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("W")->constant()->data<float>()[0], 1.0f);
}

TEST_F(ExternalDataTest, SymlinkInsideTheFolderIsAllowed) {
  ASSERT_EQ(::symlink("weights.bin", (model_dir_ + "/alias.bin").c_str()), 0);
  auto g = Import(ExternalModel("alias.bin", "0", "16"), model_dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("W")->constant()->data<float>()[2], 3.0f);
}

TEST_F(ExternalDataTest, AbsolutePathIsRefused) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel(dir_ / "secret.bin")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "'" + (dir_ / "secret.bin") + "'", "absolute path"}));
}

TEST_F(ExternalDataTest, DotDotIsRefused) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("../secret.bin")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "'../secret.bin'", "contains '..'"}));
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("sub/../../secret.bin")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "'sub/../../secret.bin'", "contains '..'"}));
  // Even a '..' that would stay inside the folder is refused: the rule is simple on purpose.
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("sub/../weights.bin")), absl::StatusCode::kInvalidArgument,
                       {"contains '..'"}));
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("..\\secret.bin")), absl::StatusCode::kInvalidArgument,
                       {"contains '..'"}));
}

TEST_F(ExternalDataTest, SymlinkLeavingTheFolderIsRefused) {
  ASSERT_EQ(::symlink((dir_ / "secret.bin").c_str(), (model_dir_ + "/link.bin").c_str()), 0);
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("link.bin", "0", "16")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "'link.bin'", "outside the model folder"}));
  // A symlinked folder that leads out counts too.
  ASSERT_EQ(::symlink(dir_.path().c_str(), (model_dir_ + "/up").c_str()), 0);
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("up/secret.bin", "0", "16")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "outside the model folder"}));
}

TEST_F(ExternalDataTest, OffsetPastTheEnd) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("weights.bin", "64", "16")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "offset 64 is past the end of 'weights.bin' (32 bytes)"}));
}

TEST_F(ExternalDataTest, LengthPastTheEnd) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("weights.bin", "24", "16")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "runs past the end of 'weights.bin'"}));
  // Without a length, the tensor's own size must fit too.
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("weights.bin", "20")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "runs past the end of 'weights.bin'"}));
}

TEST_F(ExternalDataTest, LengthNotMatchingTheTensor) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("weights.bin", "0", "12")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "length 12 in 'weights.bin' does not match the tensor's size of 16 bytes"}));
}

TEST_F(ExternalDataTest, MissingFile) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("nope.bin")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "'nope.bin' not found"}));
}

TEST_F(ExternalDataTest, BadOffsetTextNoLocationAndNotAFile) {
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("weights.bin", "-4")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "offset '-4'"}));
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("weights.bin", "1e3")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "offset '1e3'"}));
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "no location"}));
  EXPECT_TRUE(HasError(ImportStatus(ExternalModel("sub")), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "not a regular file"}));
}

TEST_F(ExternalDataTest, RefusedWhenTheModelHasNoFolder) {
  EXPECT_TRUE(HasError(Import(ExternalModel("weights.bin")).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "not loaded from a folder"}));
}

TEST_F(ExternalDataTest, ExternalAndInlineDataTogetherIsRefused) {
  onnx::ModelProto m = ExternalModel("weights.bin", "0", "16");
  m.mutable_graph()->mutable_initializer(0)->set_raw_data(RawBytes<float>({1, 2, 3, 4}));
  EXPECT_TRUE(HasError(ImportStatus(m), absl::StatusCode::kInvalidArgument, {"initializer 'W'", "inline data"}));
}

TEST_F(ExternalDataTest, SizeLimitAppliesBeforeReading) {
  ImportOptions options;
  options.max_tensor_bytes = 8;
  EXPECT_TRUE(HasError(Import(ExternalModel("weights.bin", "0", "16"), model_dir_, options).status(),
                       absl::StatusCode::kResourceExhausted, {"initializer 'W'", "size limit of 8 bytes"}));
}

TEST_F(ExternalDataTest, ConstantNodeAttributeWithExternalData) {
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, "c", TensorProto::FLOAT, {4});
  auto* node = AddNode(m, "Constant", {}, {"c"}, "const");
  auto* value = AddAttribute(node, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  value->set_data_type(TensorProto::FLOAT);
  value->add_dims(4);
  SetExternal(value, "../secret.bin", "0", "16");
  EXPECT_TRUE(HasError(ImportStatus(m), absl::StatusCode::kInvalidArgument,
                       {"node Constant 'const'", "attribute 'value'", "contains '..'"}));
  value->clear_external_data();
  SetExternal(value, "weights.bin", "16", "16");
  auto g = Import(m, model_dir_);
  ASSERT_TRUE(g.ok()) << g.status();
  auto tensor = (*g)->nodes()[0]->attributes().GetTensor("value");
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->data<float>()[0], 5.0f);
}

}  // namespace
}  // namespace attune::testing
