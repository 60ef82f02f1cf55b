// Weights left in the mapped model file (core/ir/file_constant.h,
// importer/file_weights.h): which initializers stay there, that their bytes
// and the outputs are those of the same model read from memory (where every
// initializer is an aligned copy), and that weight compression quantizes
// from them the data it quantizes from tensors.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attune/session.h"
#include "core/ir/file_constant.h"
#include "gtest/gtest.h"
#include "tests/common/random_values.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

constexpr int64_t kVocab = 1024, kWidth = 256, kOut = 1024;  // each weight 1 MiB, the size that stays in the file

std::vector<float> RandomValues(int64_t count, uint32_t seed) { return NormalValues(count, seed, 0.05f); }

// Where `raw` starts in `bytes` (the weights are random: their first bytes are unique).
int64_t OffsetOf(const std::string& bytes, const std::string& raw) {
  return static_cast<int64_t>(bytes.find(raw.substr(0, 64)));
}

// emb = Gather(embed, ids); y = MatMul(a, w); z = MatMul(a, Transpose(table)) (a tied head) with
// table also gathered; names padded until every weight's raw data sits at an address not aligned to 4.
onnx::ModelProto ProductsModel() {
  for (int pad = 0; pad < 64; ++pad) {
    onnx::ModelProto m = MinimalModel();
    AddInput(m, "ids", 7, {1, 3});
    AddInput(m, "a", 1, {2, kWidth});
    const std::string names[] = {std::string("embed") + std::string(pad % 4, '_'),
                                 std::string("w") + std::string(pad / 4 % 4, '_'),
                                 std::string("table") + std::string(pad / 16, '_')};
    const std::vector<int64_t> shapes[] = {{kVocab, kWidth}, {kWidth, kOut}, {kVocab, kWidth}};
    std::vector<std::string> raws;
    for (int i = 0; i < 3; ++i) {
      raws.push_back(RawBytes(RandomValues(shapes[i][0] * shapes[i][1], 10 + i)));
      AddInitializer(m, names[i], 1, shapes[i])->set_raw_data(raws.back());
    }
    AddNode(m, "Gather", {names[0], "ids"}, {"emb"});
    AddNode(m, "MatMul", {"a", names[1]}, {"y"});
    AddNode(m, "Gather", {names[2], "ids"}, {"tied_emb"});
    AddNode(m, "Transpose", {names[2]}, {"table_t"});
    AddNode(m, "MatMul", {"a", "table_t"}, {"z"});
    for (const char* out : {"emb", "y", "tied_emb", "z"}) AddOutput(m, out);
    const std::string bytes = Serialize(m);
    bool misaligned = true;
    for (const std::string& raw : raws) misaligned &= OffsetOf(bytes, raw) % 4 != 0;
    if (misaligned) return m;
  }
  ADD_FAILURE() << "no padding puts every weight at an unaligned offset";
  return MinimalModel();
}

class FileWeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = ProductsModel();
    bytes_ = Serialize(model_);
    WriteFile(dir_ / "model.onnx", bytes_);
    ids_ = *Tensor::FromVector<int64_t>({1, 3}, {5, kVocab - 1, 0});
    a_ = *Tensor::FromVector<float>({2, kWidth}, RandomValues(2 * kWidth, 3));
  }

  const FileConstant* InFile(const Graph& g, const std::string& prefix) {
    for (const auto& init : model_.graph().initializer())
      if (init.name().rfind(prefix, 0) == 0) {
        const Value* v = g.FindValue(init.name());
        if (v == nullptr || v->constant() != nullptr) return nullptr;
        return dynamic_cast<const FileConstant*>(v->constant_holder().get());
      }
    return nullptr;
  }

  std::string Raw(const std::string& prefix) {
    for (const auto& init : model_.graph().initializer())
      if (init.name().rfind(prefix, 0) == 0) return init.raw_data();
    return "";
  }

  NamedTensors Run(bool from_file, WeightFormat format) {
    SessionOptions options;
    options.threads = 1;
    options.weights.format = format;
    auto session = from_file ? Session::Create(dir_ / "model.onnx", options) : Session::CreateFromBytes(bytes_, options);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return {};
    auto out = (*session)->Run({{"ids", ids_}, {"a", a_}});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : NamedTensors{};
  }

  TempDir dir_;
  onnx::ModelProto model_;
  std::string bytes_;
  Tensor ids_, a_;
};

TEST_F(FileWeightsTest, TablesOnlyGatheredStayInTheFile) {
  auto graph = ImportModelFromFile(dir_ / "model.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const FileConstant* embed = InFile(**graph, "embed");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->type(), ElementType::kFloat32);
  EXPECT_EQ(embed->shape(), (std::vector<int64_t>{kVocab, kWidth}));
  const std::string raw = Raw("embed");
  ASSERT_EQ(embed->byte_size(), static_cast<int64_t>(raw.size()));
  EXPECT_EQ(0, std::memcmp(embed->bytes(), raw.data(), raw.size()));
  auto restored = embed->Restore();
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(0, std::memcmp(restored->raw_data(), raw.data(), raw.size()));
  // Read by a MatMul or a Transpose: copied, as before.
  EXPECT_EQ(InFile(**graph, "w"), nullptr);
  EXPECT_EQ(InFile(**graph, "table"), nullptr);
  // From memory nothing is mapped.
  auto from_bytes = ImportModelFromBytes(bytes_, "");
  ASSERT_TRUE(from_bytes.ok());
  EXPECT_EQ(InFile(**from_bytes, "embed"), nullptr);
}

TEST_F(FileWeightsTest, CompressionTakesEveryProductWeightInPlace) {
  ImportOptions options;
  options.weights_compressed_at_load = true;
  auto graph = ImportModelFromFile(dir_ / "model.onnx", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (const char* name : {"embed", "w", "table"}) EXPECT_NE(InFile(**graph, name), nullptr) << name;
}

// The same bits whether the weights are read in place or from aligned copies.
TEST_F(FileWeightsTest, OutputsMatchTheModelReadFromMemory) {
  for (WeightFormat format : {WeightFormat::kAsIs, WeightFormat::kInt4, WeightFormat::kInt8, WeightFormat::kBf16}) {
    const NamedTensors file = Run(true, format), memory = Run(false, format);
    ASSERT_EQ(file.size(), 4u);
    ASSERT_EQ(memory.size(), 4u);
    for (size_t i = 0; i < file.size(); ++i) {
      EXPECT_EQ(file[i].first, memory[i].first);
      ASSERT_EQ(file[i].second.shape(), memory[i].second.shape()) << file[i].first;
      EXPECT_EQ(0, std::memcmp(file[i].second.raw_data(), memory[i].second.raw_data(), file[i].second.byte_size()))
          << file[i].first << " format " << static_cast<int>(format);
    }
  }
  // The gathered rows are the table's rows.
  const NamedTensors out = Run(true, WeightFormat::kInt4);
  const std::vector<float> embed = RandomValues(kVocab * kWidth, 10);
  const int64_t rows[] = {5, kVocab - 1, 0};
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(0, std::memcmp(out[0].second.data<float>() + r * kWidth, embed.data() + rows[r] * kWidth, kWidth * 4));
}

}  // namespace
}  // namespace attune::testing
