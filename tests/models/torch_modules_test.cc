// PyTorch's own attention modules (models/torch_*: nn.MultiheadAttention,
// nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, nn.TransformerEncoder,
// nn.Transformer) merge their heads into the batch. Each must fuse with the
// true head count and the mask kind its model.json declares, block for block;
// the golden test compares their outputs with PyTorch's and the unfused run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "attune/session.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/paths.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> TorchModuleDirs() {
  std::vector<std::string> dirs;
  const fs::path root = fs::path(testing::SourceDir()) / "models";
  for (const auto& e : fs::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("torch_", 0) == 0 && fs::exists(e.path() / "model.json")) dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

class TorchModuleTest : public ::testing::TestWithParam<std::string> {};

using Block = std::tuple<std::string, int64_t, int64_t>;  // mask, heads, head size

TEST_P(TorchModuleTest, FusesWithTheTrueHeadsAndMask) {
  const fs::path dir = GetParam();
  std::ifstream in(dir / "model.json");
  const nlohmann::json spec = nlohmann::json::parse(in);
  auto session = Session::Create((dir / "model.onnx").string());
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Block> fused;
  for (const FusionRecord& f : (*session)->fusion_report().fusions)
    if (!f.undone && f.op == "MultiHeadAttention") fused.emplace_back(f.mask, f.num_heads, f.head_dim);
  std::sort(fused.begin(), fused.end());
  if (spec.value("negative", false)) {
    for (const Block& b : fused) EXPECT_EQ(std::get<0>(b).find("causal"), std::string::npos) << "a trap fused as causal";
    return;
  }
  std::vector<Block> declared;
  for (const auto& b : spec["attention_blocks"])
    declared.emplace_back(b["mask"].get<std::string>(), b["num_heads"].get<int64_t>(), b["head_dim"].get<int64_t>());
  std::sort(declared.begin(), declared.end());
  if (spec["expected_fusions"].get<size_t>() < declared.size()) {
    EXPECT_EQ(fused.size(), spec["expected_fusions"].get<size_t>());
    return;
  }
  EXPECT_EQ(fused, declared);
  // The heads are split back out of the batch: never one head per batch·head.
  for (const Block& b : fused) EXPECT_EQ(std::get<1>(b), spec.value("module_heads", std::get<1>(b)));
}

// Megatron's causal mask is sliced from a buffer of 64 positions: the model
// runs up to 64 tokens and fails beyond. The fused op takes the same lengths
// (max_kv_len) and refuses longer inputs with one line, as the unfused graph does.
TEST(MegatronBufferBound, FusedOpTakesTheLengthsTheModelTakes) {
  const fs::path model = fs::path(testing::SourceDir()) / "models" / "megatron_seq_first" / "model.onnx";
  for (int64_t tokens : {64, 65}) {
    NamedTensors results[2];
    absl::Status errors[2];
    for (int fuse = 0; fuse < 2; ++fuse) {
      SessionOptions options;
      options.fuse = fuse == 1;
      auto session = Session::Create(model.string(), options);
      ASSERT_TRUE(session.ok()) << session.status();
      auto x = Tensor::Create(ElementType::kFloat32, {tokens, 2, 64});
      ASSERT_TRUE(x.ok());
      for (int64_t i = 0; i < x->num_elements(); ++i) x->data<float>()[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
      auto out = (*session)->Run({{"x", *x}});
      if (out.ok()) results[fuse] = *std::move(out);
      else errors[fuse] = out.status();
    }
    if (tokens == 64) {
      ASSERT_TRUE(errors[0].ok() && errors[1].ok()) << errors[0] << " / " << errors[1];
      const Tensor& a = results[0][0].second;
      const Tensor& b = results[1][0].second;
      ASSERT_EQ(a.num_elements(), b.num_elements());
      for (int64_t i = 0; i < a.num_elements(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5);
    } else {
      EXPECT_FALSE(errors[0].ok()) << "the unfused model ran beyond its mask buffer";
      ASSERT_FALSE(errors[1].ok()) << "the fused op ran beyond the mask buffer";
      EXPECT_TRUE(absl::StrContains(errors[1].message(), "65 keys exceed the 64 positions")) << errors[1];
      EXPECT_EQ(std::string(errors[1].message()).find('\n'), std::string::npos);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, TorchModuleTest, ::testing::ValuesIn(TorchModuleDirs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return fs::path(info.param).filename().string();
                         });

}  // namespace
}  // namespace attune
