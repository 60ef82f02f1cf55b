// Readers that share one graph from several threads: Graph::UniqueName is
// const, and SaveOptimizedModel exports the graph of a session other threads
// run. Named *ConcurrencyTest so that scripts/tsan.sh runs it under TSan,
// which sees the race a plain counter had.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "attune/session.h"
#include "core/ir/graph.h"
#include "gtest/gtest.h"
#include "tests/api/model_inputs.h"

namespace attune::testing {
namespace {

TEST(GraphConcurrencyTest, UniqueNameFromManyThreads) {
  Graph graph;
  graph.AddValue("a");
  const Graph& shared = graph;
  constexpr int kThreads = 4, kCalls = 2000;
  std::vector<std::vector<std::string>> names(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) names[t].push_back(shared.UniqueName("a"));
    });
  for (std::thread& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& list : names) all.insert(list.begin(), list.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kCalls));
  EXPECT_EQ(all.count("a"), 0u);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Saving from several threads while others run gives the same file each time.
TEST(GraphConcurrencyTest, SaveOptimizedModelWhileRunning) {
  auto session = Session::Create(MhaCausalDir() + "/model.onnx");
  ASSERT_TRUE(session.ok()) << session.status();
  const Tensor x = ReadMhaCausalInput();
  const std::string dir = std::filesystem::temp_directory_path() / ("attune_save_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  constexpr int kSavers = 4;
  std::vector<absl::Status> saved(kSavers);
  std::vector<std::thread> threads;
  for (int t = 0; t < kSavers; ++t) {
    threads.emplace_back(
        [&, t] { saved[t] = (*session)->SaveOptimizedModel(dir + "/m" + std::to_string(t) + ".onnx"); });
    threads.emplace_back([&] { EXPECT_TRUE((*session)->Run({{"x", x}}).ok()); });
  }
  for (std::thread& t : threads) t.join();
  const std::string first = Slurp(dir + "/m0.onnx");
  EXPECT_GT(first.size(), 1000u);
  for (int t = 0; t < kSavers; ++t) {
    EXPECT_TRUE(saved[t].ok()) << saved[t];
    EXPECT_EQ(Slurp(dir + "/m" + std::to_string(t) + ".onnx"), first) << t;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attune::testing
