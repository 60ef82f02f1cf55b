// attune inspect --save-optimized: the fused graph written as ONNX, with
// attention as the standard Attention op (opset 23) where that is exact.
#include <map>

#include "attune/session.h"
#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using nlohmann::json;

struct SavedModel {
  onnx::ModelProto proto;
  std::map<std::string, int> ops;  // "domain.op" -> count
  int Count(const std::string& key) const {
    auto it = ops.find(key);
    return it == ops.end() ? 0 : it->second;
  }
  int default_opset = 0;
  bool imports_attune = false;
};

SavedModel LoadSaved(const std::string& path) {
  SavedModel s;
  EXPECT_TRUE(s.proto.ParseFromString(ReadFile(path))) << path;
  for (const auto& node : s.proto.graph().node()) ++s.ops[node.domain() + "." + node.op_type()];
  for (const auto& opset : s.proto.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") s.default_opset = static_cast<int>(opset.version());
    if (opset.domain() == "attune") s.imports_attune = true;
  }
  return s;
}

const onnx::NodeProto* FindNode(const onnx::ModelProto& m, const std::string& op) {
  for (const auto& node : m.graph().node())
    if (node.op_type() == op) return &node;
  return nullptr;
}

int64_t IntAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

class SaveOptimizedTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(SaveOptimizedTest, SavedModelRunsWithTheSameOutputs) {
  const ModelCase& m = GetParam();
  TempDir dir;
  const std::string saved_path = dir / "optimized.onnx";
  const CliResult inspect =
      RunCli({"inspect", m.model(), "--format", "json", "--save-optimized", saved_path, "--threads", "1"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  const json report = json::parse(inspect.out);
  ASSERT_TRUE(report.contains("saved_model"));
  const json& saved = report["saved_model"];
  const int fusions = static_cast<int>(report["fusions"].size());
  const int attention_ops = saved["attention_ops"].get<int>();
  // A node with attention sinks is written as its standard subgraph (ONNX Attention has no sinks).
  const int subgraphs = saved.value("attention_subgraphs", 0);
  const int kept_ops = static_cast<int>(saved["kept_as_multi_head_attention"].size());
  const int vendor_ops = saved.value("group_query_attention_ops", 0);  // lowered GroupQueryAttention written back
  EXPECT_EQ(attention_ops + kept_ops + subgraphs + vendor_ops, fusions);
  for (const json& kept : saved["kept_as_multi_head_attention"])
    EXPECT_FALSE(kept["reason"].get<std::string>().empty());

  const SavedModel s = LoadSaved(saved_path);
  EXPECT_EQ(s.Count(".Attention"), attention_ops);
  EXPECT_EQ(s.Count("attune.MultiHeadAttention"), kept_ops);
  EXPECT_EQ(s.imports_attune, kept_ops > 0);
  const int original_opset = m.info()["opset"].get<int>();
  if (attention_ops > 0) {
    EXPECT_EQ(s.default_opset, 23);
    EXPECT_EQ(s.proto.ir_version(), 10);
    EXPECT_EQ(saved["default_opset"], 23);
  } else {
    EXPECT_EQ(s.default_opset, original_opset);
  }

  // The saved model through attune again: the same numbers as the original.
  std::vector<std::string> inputs = m.InputFlags();
  std::vector<std::string> a = {"run", m.model(), "--output-dir", dir / "original", "--threads", "1"};
  std::vector<std::string> b = {"run", saved_path, "--output-dir", dir / "saved", "--threads", "1"};
  a.insert(a.end(), inputs.begin(), inputs.end());
  b.insert(b.end(), inputs.begin(), inputs.end());
  const CliResult ra = RunCli(a), rb = RunCli(b);
  ASSERT_EQ(ra.exit_code, 0) << Describe(ra);
  ASSERT_EQ(rb.exit_code, 0) << Describe(rb);
  for (const std::string& name : m.OutputNames()) {
    const std::string want = m.dir + "/outputs/" + name + ".npy";
    EXPECT_LE(MaxAbsDiff(dir / ("saved/" + name + ".npy"), dir / ("original/" + name + ".npy")),
              ModelTolerance(m.info(), want, 1e-5, 2))
        << name;
    EXPECT_LE(MaxAbsDiff(dir / ("saved/" + name + ".npy"), want), ModelTolerance(m.info(), want, 1e-4, 4)) << name;
  }

  // Re-imported, the attention stays one op and nothing else is fused again; each subgraph
  // written for a node with sinks brings its Softmax back.
  const CliResult again = RunCli({"inspect", saved_path, "--format", "json", "--threads", "1"});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  const json r2 = json::parse(again.out);
  EXPECT_EQ(r2["ops_before"].value("Attention", 0), attention_ops);
  EXPECT_EQ(r2["ops_after"].value("Attention", 0), attention_ops);
  EXPECT_EQ(r2["ops_before"].value("Softmax", 0), report["ops_after"].value("Softmax", 0) + subgraphs);
}

INSTANTIATE_TEST_SUITE_P(Models, SaveOptimizedTest, ::testing::ValuesIn(AllModels()), TestName);

TEST(SaveOptimized, CausalModelBecomesOneOnnxAttention) {
  TempDir dir;
  // An additive causal mask: ONNX Attention adds its mask too, so NaN goes where it went.
  const CliResult r = RunCli({"inspect", Model("mha_additive_mask").model(), "--save-optimized", dir / "o.onnx"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("1 written as ONNX Attention, 0 kept as attune.MultiHeadAttention"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ai.onnx 17 -> 23"), std::string::npos) << r.out;
  const SavedModel s = LoadSaved(dir / "o.onnx");
  const onnx::NodeProto* attention = FindNode(s.proto, "Attention");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->domain(), "");
  EXPECT_EQ(IntAttr(*attention, "is_causal", 0), 1);
  EXPECT_EQ(IntAttr(*attention, "q_num_heads", 0), 4);
  EXPECT_EQ(IntAttr(*attention, "kv_num_heads", 0), 4);
  EXPECT_EQ(s.Count("attune.MultiHeadAttention"), 0);
  EXPECT_EQ(s.Count(".Softmax"), 0);
  EXPECT_FALSE(s.imports_attune);
}

// Saves `model` and checks its one fused op stays attune.MultiHeadAttention
// with a reason that mentions `why`.
void ExpectKeptWithReason(const std::string& model, const std::string& why, const TempDir& dir) {
  const CliResult r = RunCli({"inspect", Model(model).model(), "--format", "json", "--save-optimized", dir / "o.onnx"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json saved = json::parse(r.out)["saved_model"];
  EXPECT_EQ(saved["attention_ops"], 0);
  ASSERT_EQ(saved["kept_as_multi_head_attention"].size(), 1u);
  EXPECT_NE(saved["kept_as_multi_head_attention"][0]["reason"].get<std::string>().find(why), std::string::npos);
}

TEST(SaveOptimized, WindowStaysMultiHeadAttentionWithAReason) {
  TempDir dir;
  ExpectKeptWithReason("mha_window8", "window", dir);
  const SavedModel s = LoadSaved(dir / "o.onnx");
  EXPECT_EQ(s.default_opset, 17);
  EXPECT_TRUE(s.imports_attune);
  const onnx::NodeProto* mha = FindNode(s.proto, "MultiHeadAttention");
  ASSERT_NE(mha, nullptr);
  EXPECT_EQ(mha->domain(), "attune");
  EXPECT_EQ(IntAttr(*mha, "window", 0), 8);
}

TEST(SaveOptimized, AWhereCausalMaskBecomesOnnxAttentionWithItsNonFiniteDifference) {
  // masked_fill(-inf) replaces hidden scores; ONNX Attention adds -inf to
  // them. No row has every key hidden, so the two differ only where a score
  // is NaN or infinite, which the saved model's summary says.
  TempDir dir;
  const CliResult r =
      RunCli({"inspect", Model("mha_causal").model(), "--format", "json", "--save-optimized", dir / "o.onnx"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json saved = json::parse(r.out)["saved_model"];
  EXPECT_EQ(saved["attention_ops"], 1);
  EXPECT_TRUE(saved["kept_as_multi_head_attention"].empty());
  ASSERT_EQ(saved["nonfinite_differences"].size(), 1u);
  EXPECT_NE(saved["nonfinite_differences"][0]["difference"].get<std::string>().find("finite"), std::string::npos);
  const SavedModel s = LoadSaved(dir / "o.onnx");
  EXPECT_EQ(s.Count("attune.MultiHeadAttention"), 0);
  EXPECT_FALSE(s.imports_attune);
}

TEST(SaveOptimized, UnwritableTargetIsAnError) {
  const CliResult r =
      RunCli({"inspect", Model("mha_causal").model(), "--save-optimized", "/nonexistent-dir/sub/o.onnx"});
  EXPECT_EQ(r.signal, 0);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(ErrorLine(r), "") << Describe(r);
}

}  // namespace
}  // namespace attune::cli_test

namespace attune::cli_test {
namespace {

TEST(SaveOptimized, SessionApiWritesTheSameModel) {
  auto session = Session::Create(attune::testing::SourceDir() + "/models/mha_additive_mask/model.onnx");
  ASSERT_TRUE(session.ok()) << session.status();
  TempDir dir;
  ASSERT_TRUE((*session)->SaveOptimizedModel(dir / "o.onnx").ok());
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(ReadFile(dir / "o.onnx")));
  int attention = 0;
  for (const auto& node : proto.graph().node()) attention += node.op_type() == "Attention" && node.domain().empty();
  EXPECT_EQ(attention, 1);
  EXPECT_EQ(proto.ir_version(), 10);
}

}  // namespace
}  // namespace attune::cli_test
