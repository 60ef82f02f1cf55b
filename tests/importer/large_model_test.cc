// Models above protobuf's default 64 MB parse limit load (the limit is raised to 2 GB).
#include <sys/stat.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

TEST(LargeModelTest, SeventyMegabyteInitializerLoads) {
  constexpr int64_t kCount = 70 * 1024 * 1024 / 4;  // 70 MiB of float32
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, "W", onnx::TensorProto::FLOAT, {kCount});
  std::vector<float> values(kCount);
  for (int64_t i = 0; i < kCount; ++i) values[i] = static_cast<float>(i % 1000);
  AddInitializer(m, "W", onnx::TensorProto::FLOAT, {kCount})->set_raw_data(RawBytes(values));
  values = {};
  const std::string bytes = Serialize(m);
  m.Clear();
  ASSERT_GT(bytes.size(), 64u << 20);

  auto from_bytes = ImportModelFromBytes(bytes, "");
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status();
  const Tensor* w = (*from_bytes)->FindValue("W")->constant();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->num_elements(), kCount);
  EXPECT_EQ(w->data<float>()[kCount - 1], static_cast<float>((kCount - 1) % 1000));
  from_bytes = absl::InternalError("released");

  TempDir dir;
  WriteFile(dir / "big.onnx", bytes);
  auto from_file = ImportModelFromFile(dir / "big.onnx");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ((*from_file)->FindValue("W")->constant()->data<float>()[123457], 457.0f);
}

TEST(LargeModelTest, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "pipe.onnx").c_str(), 0600), 0);
  EXPECT_TRUE(HasError(ImportModelFromFile(dir / "pipe.onnx").status(), absl::StatusCode::kInvalidArgument,
                       {"not a regular file"}));
  ASSERT_EQ(::mkfifo((dir / "pipe.bin").c_str(), 0600), 0);
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, "W", onnx::TensorProto::FLOAT, {1});
  auto* t = AddInitializer(m, "W", onnx::TensorProto::FLOAT, {1});
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value("pipe.bin");
  EXPECT_TRUE(HasError(Import(m, dir.path()).status(), absl::StatusCode::kInvalidArgument,
                       {"initializer 'W'", "'pipe.bin'", "not a regular file"}));
}

}  // namespace
}  // namespace attune::testing
