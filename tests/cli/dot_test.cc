// attune inspect --format dot: parsed back into nodes and edges, and fed to Graphviz.
#include <map>
#include <regex>
#include <set>

#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

struct DotGraph {
  std::map<std::string, std::string> nodes;  // id -> attribute text
  std::vector<std::pair<std::string, std::string>> edges;
  std::vector<std::string> unparsed;
};

// The writer puts one statement on each line: `id [attrs];` or `a -> b [attrs];`.
DotGraph ParseDot(const std::string& text) {
  DotGraph g;
  static const std::regex kNode(R"(^  ([A-Za-z_][A-Za-z0-9_]*) \[(.*)\];$)");
  static const std::regex kEdge(R"(^  ([A-Za-z_][A-Za-z0-9_]*) -> ([A-Za-z_][A-Za-z0-9_]*)( \[(.*)\])?;$)");
  std::vector<std::string> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::smatch m;
    if (i == 0 && line == "digraph attune {") continue;
    if (i + 1 == lines.size() && line == "}") continue;
    if (std::regex_match(line, m, kEdge)) {
      g.edges.emplace_back(m[1], m[2]);
    } else if (std::regex_match(line, m, kNode)) {
      if (m[1] == "graph" || m[1] == "node" || m[1] == "edge") continue;
      g.nodes[m[1]] = m[2];
    } else {
      g.unparsed.push_back(line);
    }
  }
  return g;
}

int CountWithPrefix(const DotGraph& g, const std::string& prefix) {
  int n = 0;
  for (const auto& [id, attrs] : g.nodes) n += id.rfind(prefix, 0) == 0;
  return n;
}

std::string RunDot(const std::string& dot_text) {
  TempDir dir;
  WriteFile(dir / "g.dot", dot_text);
  const std::string command = DotPath() + " -Tsvg " + (dir / "g.dot") + " -o " + (dir / "g.svg") + " 2> " +
                              (dir / "err.txt");
  const int status = std::system(command.c_str());
  if (status != 0) return "dot failed: " + ReadFile(dir / "err.txt");
  const std::string svg = ReadFile(dir / "g.svg");
  if (svg.find("<svg") == std::string::npos) return "no svg written";
  const std::string warnings = ReadFile(dir / "err.txt");
  if (!warnings.empty()) return "dot warned: " + warnings;
  return "";
}

class DotModelTest : public ::testing::TestWithParam<ModelCase> {
 protected:
  void Check(bool show_all) {
    const ModelCase& m = GetParam();
    std::vector<std::string> args = {"inspect", m.model(), "--format", "dot", "--threads", "1"};
    if (show_all) args.push_back("--show-all");
    const CliResult r = RunCli(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const DotGraph g = ParseDot(r.out);
    EXPECT_TRUE(g.unparsed.empty()) << g.unparsed.size() << " unparsed lines, first: " << g.unparsed[0];
    // Every edge joins declared nodes; every node but the graph's inputs has an edge in.
    std::set<std::string> with_input;
    for (const auto& [from, to] : g.edges) {
      EXPECT_TRUE(g.nodes.contains(from)) << "edge from undeclared " << from;
      EXPECT_TRUE(g.nodes.contains(to)) << "edge to undeclared " << to;
      with_input.insert(to);
    }
    for (const auto& [id, attrs] : g.nodes)
      if (id.rfind("output_", 0) == 0) EXPECT_TRUE(with_input.contains(id)) << id;

    const nlohmann::json info = m.info();
    const CliResult j = RunCli({"inspect", m.model(), "--format", "json", "--threads", "1"});
    const nlohmann::json report = nlohmann::json::parse(j.out);
    EXPECT_EQ(CountWithPrefix(g, "input_"), static_cast<int>(info["inputs"].size()));
    EXPECT_EQ(CountWithPrefix(g, "output_"), static_cast<int>(info["outputs"].size()));
    // Fused nodes are drawn (those of folded layers inside a layers_ box).
    const int fused = CountWithPrefix(g, "fused_");
    const int fusions = static_cast<int>(report["fusions"].size());
    if (show_all || CountWithPrefix(g, "layers_") == 0) EXPECT_EQ(fused, fusions);
    else EXPECT_GE(fused, std::min(1, fusions));
    for (const auto& [id, attrs] : g.nodes) {
      if (id.rfind("fused_", 0) != 0) continue;
      EXPECT_NE(attrs.find("MultiHeadAttention"), std::string::npos) << attrs;
      EXPECT_NE(attrs.find("heads "), std::string::npos) << attrs;
      EXPECT_NE(attrs.find("mask "), std::string::npos) << attrs;
      EXPECT_NE(attrs.find("replaced "), std::string::npos) << attrs;
      EXPECT_NE(attrs.find("fillcolor=\"#ffd27a\""), std::string::npos) << attrs;
    }
    if (show_all) {
      EXPECT_EQ(CountWithPrefix(g, "shape_"), 0);
      EXPECT_EQ(CountWithPrefix(g, "layers_"), 0);
      int ops = 0;
      for (const auto& [op, n] : report["ops_after"].items()) ops += n.get<int>();
      EXPECT_EQ(CountWithPrefix(g, "op_") + fused, ops);
    }
    if (DotPath().empty()) GTEST_SKIP() << "Graphviz 'dot' is not installed (scripts/setup.sh installs it)";
    EXPECT_EQ(RunDot(r.out), "") << m.name;
  }
};

TEST_P(DotModelTest, FoldedGraphIsValidDot) { Check(false); }
TEST_P(DotModelTest, FullGraphIsValidDot) { Check(true); }

INSTANTIATE_TEST_SUITE_P(Models, DotModelTest, ::testing::ValuesIn(AllModels()), TestName);

TEST(DotReport, FusedNodeListsItsAttributesAndReplacedNodes) {
  const CliResult r = RunCli({"inspect", Model("mha_window8").model(), "--format", "dot"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const DotGraph g = ParseDot(r.out);
  const nlohmann::json report =
      nlohmann::json::parse(RunCli({"inspect", Model("mha_window8").model(), "--format", "json"}).out);
  ASSERT_EQ(CountWithPrefix(g, "fused_"), 1);
  std::string attrs;
  for (const auto& [id, a] : g.nodes)
    if (id.rfind("fused_", 0) == 0) attrs = a;
  EXPECT_NE(attrs.find("heads 4 (kv 4) x head dim 16, scale 0.25"), std::string::npos) << attrs;
  EXPECT_NE(attrs.find("mask causal, window 8"), std::string::npos) << attrs;
  const auto& replaced = report["fusions"][0]["replaced"];
  EXPECT_NE(attrs.find("replaced " + std::to_string(replaced.size()) + " nodes"), std::string::npos) << attrs;
  for (const auto& name : replaced) EXPECT_NE(attrs.find(name.get<std::string>()), std::string::npos) << name;
}

TEST(DotReport, ShapeChainsAreFoldedUnlessShowAll) {
  const std::string model = Model("gpt_kvcache").model();
  const DotGraph folded = ParseDot(RunCli({"inspect", model, "--format", "dot"}).out);
  const DotGraph full = ParseDot(RunCli({"inspect", model, "--format", "dot", "--show-all"}).out);
  EXPECT_GT(CountWithPrefix(folded, "shape_"), 0);
  EXPECT_LT(folded.nodes.size(), full.nodes.size());
  int shape_ops_full = 0;
  for (const auto& [id, attrs] : full.nodes) shape_ops_full += attrs.find("<b>Shape</b>") != std::string::npos;
  int shape_ops_folded = 0;
  for (const auto& [id, attrs] : folded.nodes) shape_ops_folded += attrs.find("<b>Shape</b>") != std::string::npos;
  EXPECT_GT(shape_ops_full, 0);
  EXPECT_EQ(shape_ops_folded, 0);
}

TEST(DotReport, RepeatedLayersFoldIntoOneBox) {
  const std::string model = Model("gpt_maskfill").model();
  const DotGraph folded = ParseDot(RunCli({"inspect", model, "--format", "dot"}).out);
  ASSERT_EQ(CountWithPrefix(folded, "layers_"), 1);
  EXPECT_EQ(CountWithPrefix(folded, "fused_"), 1);
  for (const auto& [id, attrs] : folded.nodes)
    if (id.rfind("layers_", 0) == 0) EXPECT_NE(attrs.find("1 more layer like"), std::string::npos) << attrs;
  // The box sits between the first layer and the head: edges both in and out.
  bool in = false, out = false;
  for (const auto& [from, to] : folded.edges) {
    in = in || to.rfind("layers_", 0) == 0;
    out = out || from.rfind("layers_", 0) == 0;
  }
  EXPECT_TRUE(in);
  EXPECT_TRUE(out);
}

TEST(DotReport, RejectedCandidatesAreMarked) {
  // Not fused at all: the reason sits on the Softmax where the match was anchored.
  const CliResult r = RunCli({"inspect", Model("negative/scale_from_input").model(), "--format", "dot"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const DotGraph g = ParseDot(r.out);
  EXPECT_EQ(CountWithPrefix(g, "fused_"), 0);
  bool marked = false;
  for (const auto& [id, attrs] : g.nodes)
    marked = marked || (attrs.find("<b>Softmax</b>") != std::string::npos &&
                        attrs.find("not fused: scale is not a constant") != std::string::npos);
  EXPECT_TRUE(marked) << r.out;
  // Fused with an explicit mask: the fused node says why it is not causal.
  const CliResult e = RunCli({"inspect", Model("negative/anticausal_mask").model(), "--format", "dot"});
  const DotGraph ge = ParseDot(e.out);
  ASSERT_EQ(CountWithPrefix(ge, "fused_"), 1);
  for (const auto& [id, attrs] : ge.nodes)
    if (id.rfind("fused_", 0) == 0) {
      EXPECT_NE(attrs.find("mask explicit"), std::string::npos) << attrs;
      EXPECT_NE(attrs.find("not fused as causal: mask differs from causal"), std::string::npos) << attrs;
    }
}

}  // namespace
}  // namespace attune::cli_test
