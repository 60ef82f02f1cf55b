// attune bench: the JSON statistics, load time, work and fused attention count, the Chrome-trace
// profile, generated inputs.
#include <algorithm>
#include <map>

#include "tests/cli/cli_test_util.h"

namespace attune::cli_test {
namespace {

using nlohmann::json;

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(BenchCommand, JsonHasConsistentStatistics) {
  const ModelCase m = Model("mha_causal");
  const CliResult r = RunCli(With({"bench", m.model(), "--iterations", "7", "--warmup", "1", "--threads", "1", "--json"},
                                  m.InputFlags()));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  for (const char* key : {"median_ms", "min_ms", "max_ms", "p90_ms", "p99_ms", "iterations", "threads", "peak_rss_mb"})
    ASSERT_TRUE(j.contains(key) && j[key].is_number()) << key << " in " << r.out;
  const double min = j["min_ms"], median = j["median_ms"], max = j["max_ms"], p90 = j["p90_ms"], p99 = j["p99_ms"];
  EXPECT_GT(min, 0.0);
  EXPECT_LE(min, median);
  EXPECT_LE(median, p90);
  EXPECT_LE(p90, p99);
  EXPECT_LE(p99, max);
  EXPECT_EQ(j["iterations"], 7);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 1.0);
  EXPECT_LT(j["peak_rss_mb"].get<double>(), 4096.0);
}

// mha_causal at its sample inputs (x: 2 x 11 x 64; 4 heads of 16): the four
// 64 x 64 projections, 2·M·N·K each with M = 2·11, and the attention's
// Q·Kᵀ and P·V over all 11 x 11 query-key pairs, 2·B·Tq·Tk·(H·D + H·Dv).
constexpr double kMhaCausalFlop = 4 * 2.0 * 22 * 64 * 64 + 2.0 * 2 * 11 * 11 * (64 + 64);
// The projection weights and the output bias, float32; the mask is bool.
constexpr double kMhaCausalWeightBytes = (4 * 64 * 64 + 64) * 4.0;

TEST(BenchCommand, JsonHasLoadTimeWorkAndFusedAttention) {
  const ModelCase m = Model("mha_causal");
  const CliResult r = RunCli(With({"bench", m.model(), "--iterations", "5", "--warmup", "1", "--threads", "1", "--json"},
                                  m.InputFlags()));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  for (const char* key : {"load_ms", "fused_attention", "gflop", "weight_mb"})
    ASSERT_TRUE(j.contains(key) && j[key].is_number()) << key << " in " << r.out;
  EXPECT_GT(j["load_ms"].get<double>(), 0.0);  // a load took some time; how much is the machine's

  // The fused attention count is the fusion report's, as inspect shows it.
  const CliResult inspect = RunCli({"inspect", m.model(), "--format", "json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  const json report = json::parse(inspect.out);
  int fused = 0;
  for (const json& f : report["fusions"]) fused += f["op"] == "MultiHeadAttention" && !f["undone"].get<bool>();
  EXPECT_EQ(fused, m.info()["expected_fusions"].get<int>());
  EXPECT_EQ(j["fused_attention"].get<int>(), fused);
  EXPECT_EQ(j["fused_attention"].get<int>(), Count(report["ops_after"], "MultiHeadAttention"));

  EXPECT_NEAR(j["gflop"].get<double>(), kMhaCausalFlop / 1e9, 1e-12) << r.out;
  EXPECT_NEAR(j["weight_mb"].get<double>(), kMhaCausalWeightBytes / 1e6, 1e-9) << r.out;

  // Every timed run, in order; the statistics are theirs.
  ASSERT_TRUE(j["latencies_ms"].is_array()) << r.out;
  ASSERT_EQ(j["latencies_ms"].size(), 5u);
  double min = 1e300, max = 0;
  for (const json& t : j["latencies_ms"]) {
    ASSERT_TRUE(t.is_number());
    min = std::min(min, t.get<double>());
    max = std::max(max, t.get<double>());
  }
  EXPECT_DOUBLE_EQ(min, j["min_ms"].get<double>());
  EXPECT_DOUBLE_EQ(max, j["max_ms"].get<double>());
}

TEST(BenchCommand, FusedAndUnfusedGraphsCountTheSameWork) {
  // Unfused, Q·Kᵀ and P·V are MatMuls; fused, one MultiHeadAttention counts them.
  const ModelCase m = Model("mha_causal");
  const std::vector<std::string> base = {"bench", m.model(), "--iterations", "1", "--warmup", "0", "--json"};
  const CliResult fused = RunCli(With(base, m.InputFlags()));
  const CliResult unfused = RunCli(With(With(base, {"--no-fuse"}), m.InputFlags()));
  ASSERT_EQ(fused.exit_code, 0) << Describe(fused);
  ASSERT_EQ(unfused.exit_code, 0) << Describe(unfused);
  const json f = json::parse(fused.out), u = json::parse(unfused.out);
  EXPECT_EQ(f["fused_attention"], 1);
  EXPECT_EQ(u["fused_attention"], 0);
  EXPECT_NEAR(u["gflop"].get<double>(), f["gflop"].get<double>(), 1e-12);
  EXPECT_NEAR(u["gflop"].get<double>(), kMhaCausalFlop / 1e9, 1e-12);
  // Unfused, the scale and the -inf fill are two more float scalars.
  EXPECT_GE(u["weight_mb"].get<double>(), f["weight_mb"].get<double>());
  EXPECT_LE(u["weight_mb"].get<double>(), f["weight_mb"].get<double>() + 1e-4);
}

TEST(BenchCommand, WorkIsCountedAtTheShapesOfTheRun) {
  // The attention of a decode step grows with the past; the weights read do not.
  auto bench = [](const std::string& past) {
    const CliResult r = RunCli({"bench", Model("gpt_kvcache").model(), "--dim", "batch=1", "--dim", "seq=1", "--dim",
                                "past_seq=" + past, "--iterations", "1", "--warmup", "1", "--json"});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return json::parse(r.out, nullptr, false);
  };
  const json short_past = bench("3"), long_past = bench("40");
  ASSERT_TRUE(short_past.is_object() && long_past.is_object());
  EXPECT_GT(short_past["gflop"].get<double>(), 0.0);
  EXPECT_GT(long_past["gflop"].get<double>(), short_past["gflop"].get<double>());
  EXPECT_GT(short_past["weight_mb"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(long_past["weight_mb"].get<double>(), short_past["weight_mb"].get<double>());
  EXPECT_EQ(long_past["fused_attention"], short_past["fused_attention"]);
}

TEST(BenchCommand, TextOutputShowsLatencyLine) {
  const ModelCase m = Model("single_head");
  const CliResult r = RunCli(With({"bench", m.model(), "--iterations", "3", "--warmup", "0"}, m.InputFlags()));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("latency ms  median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak RSS"), std::string::npos) << r.out;
}

TEST(BenchCommand, ProfileIsAChromeTraceWithOneEventPerNodePerRun) {
  const ModelCase m = Model("gpt_maskfill");
  TempDir dir;
  const std::string trace_path = dir / "trace.json";
  const CliResult r = RunCli(With({"bench", m.model(), "--iterations", "2", "--warmup", "0", "--threads", "1",
                                   "--profile", trace_path},
                                  m.InputFlags()));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json trace = json::parse(ReadFile(trace_path), nullptr, false);
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());

  // The optimised graph's nodes, from the inspect report.
  const json report = json::parse(RunCli({"inspect", m.model(), "--format", "json"}).out);
  std::map<std::string, int> ops;
  int nodes = 0;
  for (const auto& [op, n] : report["ops_after"].items()) {
    ops[op] = n.get<int>();
    nodes += n.get<int>();
  }
  std::map<std::string, int> events_per_node;
  std::map<int, int> events_per_run;
  std::map<std::string, int> events_per_op;
  for (const json& e : trace["traceEvents"]) {
    ASSERT_EQ(e["ph"], "X") << e.dump();
    ASSERT_TRUE(e["name"].is_string());
    ASSERT_TRUE(e["ts"].is_number());
    ASSERT_TRUE(e["dur"].is_number());
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    ASSERT_TRUE(e.contains("pid") && e.contains("tid"));
    ++events_per_node[e["name"]];
    ++events_per_run[e["args"]["run"].get<int>()];
    ++events_per_op[e["args"]["op_type"]];
  }
  ASSERT_FALSE(events_per_run.empty());
  const int runs = static_cast<int>(events_per_run.size());
  EXPECT_EQ(static_cast<int>(trace["traceEvents"].size()), nodes * runs);
  EXPECT_EQ(static_cast<int>(events_per_node.size()), nodes);
  for (const auto& [name, n] : events_per_node) EXPECT_EQ(n, runs) << name;
  for (const auto& [run, n] : events_per_run) EXPECT_EQ(n, nodes) << "run " << run;
  for (const auto& [op, n] : ops) EXPECT_EQ(events_per_op[op], n * runs) << op;

  // The per-op summary on stdout, heaviest first, with every op type.
  EXPECT_NE(r.out.find("op type"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ms per run"), std::string::npos) << r.out;
  for (const auto& [op, n] : ops) EXPECT_NE(r.out.find("\n" + op + " "), std::string::npos) << op << "\n" << r.out;
}

TEST(BenchCommand, GeneratesTokenIdsBelowTheVocabulary) {
  // Both GPTs index a 97-row embedding; out-of-range ids would fail Gather.
  for (const std::string name : {"gpt_maskfill", "gpt_where_finfo"}) {
    const CliResult dims = RunCli({"bench", Model(name).model(), "--dim", "batch=2", "--dim", "seq=40",
                                   "--iterations", "2", "--warmup", "0", "--json"});
    ASSERT_EQ(dims.exit_code, 0) << name << Describe(dims);
    const CliResult shape = RunCli({"bench", Model(name).model(), "--shape", "input_ids=1x64", "--iterations", "2",
                                    "--warmup", "0", "--json"});
    ASSERT_EQ(shape.exit_code, 0) << name << Describe(shape);
    EXPECT_TRUE(json::parse(shape.out).contains("median_ms"));
  }
}

TEST(BenchCommand, KvCacheModelWithAllSymbolsBound) {
  const CliResult r = RunCli({"bench", Model("gpt_kvcache").model(), "--dim", "batch=1", "--dim", "seq=4", "--dim",
                              "past_seq=9", "--iterations", "2", "--warmup", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
}

TEST(BenchCommand, UnboundSymbolIsAClearError) {
  const CliResult r = RunCli({"bench", Model("gpt_maskfill").model(), "--dim", "batch=1", "--iterations", "1"});
  ASSERT_TRUE(IsUsageError(r));
  const std::string line = ErrorLine(r);
  EXPECT_NE(line.find("'seq'"), std::string::npos) << line;
  EXPECT_NE(line.find("--dim seq=N"), std::string::npos) << line;
  EXPECT_NE(line.find("input_ids"), std::string::npos) << line;
}

TEST(BenchCommand, BadShapeOrDimIsAUsageError) {
  const std::string model = Model("gpt_maskfill").model();
  EXPECT_TRUE(IsUsageError(RunCli({"bench", model, "--shape", "input_ids=2xq"})));
  EXPECT_TRUE(IsUsageError(RunCli({"bench", model, "--shape", "input_ids"})));
  EXPECT_TRUE(IsUsageError(RunCli({"bench", model, "--dim", "seq=-3"})));
  EXPECT_TRUE(IsUsageError(RunCli({"bench", model, "--dim", "seq"})));
  EXPECT_TRUE(IsUsageError(RunCli({"bench", model, "--iterations", "many"})));
}

TEST(BenchCommand, CountsConvolutionWork) {
  // X (1, 4, 9, 9) through a 3x3 Conv to 6 channels (groups 2, stride 2, pads 1: Y is 1x6x5x5),
  // then a ConvTranspose of it back to 4 channels (kernel 2, stride 2: 1x4x10x10).
  namespace t = attune::testing;
  onnx::ModelProto model = t::MinimalModel(17);
  t::AddInput(model, "x", 1, {int64_t{1}, int64_t{4}, int64_t{9}, int64_t{9}});
  t::AddOutput(model, "z", 1, {int64_t{1}, int64_t{4}, int64_t{10}, int64_t{10}});
  t::AddInitializer(model, "w", 1, {6, 2, 3, 3})->set_raw_data(t::RawBytes(std::vector<float>(6 * 2 * 3 * 3, 0.5f)));
  t::AddInitializer(model, "wt", 1, {6, 4, 2, 2})->set_raw_data(t::RawBytes(std::vector<float>(6 * 4 * 2 * 2, 0.25f)));
  onnx::NodeProto* conv = t::AddNode(model, "Conv", {"x", "w"}, {"y"}, "conv");
  for (const auto& [name, values] : std::map<std::string, std::vector<int64_t>>{
           {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"kernel_shape", {3, 3}}}) {
    onnx::AttributeProto* a = t::AddAttribute(conv, name, onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  t::AddAttribute(conv, "group", onnx::AttributeProto::INT)->set_i(2);
  onnx::NodeProto* up = t::AddNode(model, "ConvTranspose", {"y", "wt"}, {"z"}, "up");
  for (const char* name : {"strides", "kernel_shape"}) {
    onnx::AttributeProto* a = t::AddAttribute(up, name, onnx::AttributeProto::INTS);
    a->add_ints(2);
    a->add_ints(2);
  }
  TempDir dir;
  WriteFile(dir / "conv.onnx", model.SerializeAsString());
  const CliResult r = RunCli({"bench", dir / "conv.onnx", "--iterations", "1", "--warmup", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  // Conv: 150 outputs, each 2 input channels x 9 taps; ConvTranspose: 150 inputs, each spread
  // over 4 channels x 4 taps. Two flops per product.
  const double flop = 2.0 * 150 * (2 * 9) + 2.0 * 150 * (4 * 4);
  EXPECT_NEAR(j["gflop"].get<double>(), flop / 1e9, 1e-15) << r.out;
}

}  // namespace
}  // namespace attune::cli_test
