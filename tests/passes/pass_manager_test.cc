// PassManager: a stage that never reaches its fixed point is reported (the
// report and a warning in the log), and StopAfter ends the run after the
// first run of the named pass.
#include "engine/passes/pass_manager.h"

#include <gtest/gtest.h>

#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

// Changes nothing but says it did, every time: its stage can only end at its cap.
class AlwaysChanges : public Pass {
 public:
  explicit AlwaysChanges(int* runs) : runs_(runs) {}
  std::string_view name() const override { return "always_changes"; }
  absl::StatusOr<bool> Run(Graph&, PassContext&) override {
    ++*runs_;
    return true;
  }

 private:
  int* runs_;
};

class Counts : public Pass {
 public:
  Counts(std::string name, int* runs) : name_(std::move(name)), runs_(runs) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Graph&, PassContext&) override {
    ++*runs_;
    return false;
  }

 private:
  std::string name_;
  int* runs_;
};

std::unique_ptr<Graph> SmallGraph() {
  GraphBuilder b;
  Value* x = b.Input("x", ElementType::kFloat32, Dims({2}));
  b.Output(b.Node("Relu", {x}));
  return b.Build();
}

std::vector<std::unique_ptr<Pass>> Passes(std::unique_ptr<Pass> a, std::unique_ptr<Pass> b = nullptr) {
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(std::move(a));
  if (b) passes.push_back(std::move(b));
  return passes;
}

TEST(PassManager, AStageAtItsIterationCapIsReportedAndLogged) {
  int changing = 0, later = 0;
  PassManager manager;
  manager.AddStage("spin", Passes(std::make_unique<AlwaysChanges>(&changing)), /*max_iterations=*/5);
  manager.AddStage("after", Passes(std::make_unique<Counts>("later", &later)));
  auto graph = SmallGraph();
  FusionReport report;
  PassContext context;
  context.report = &report;
  context.exec_options.logger = Logger(LogLevel::kWarning);

  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(manager.Run(*graph, context).ok());
  const std::string log = ::testing::internal::GetCapturedStderr();

  EXPECT_EQ(changing, 5);
  EXPECT_EQ(later, 1) << "the stages after it still run";
  ASSERT_EQ(report.iteration_cap_hit.size(), 1u);
  EXPECT_EQ(report.iteration_cap_hit[0].stage, "spin");
  EXPECT_EQ(report.iteration_cap_hit[0].rounds, 5);
  EXPECT_NE(log.find("attune [warning]"), std::string::npos) << log;
  EXPECT_NE(log.find("stage spin"), std::string::npos) << log;
  EXPECT_NE(log.find("round 5"), std::string::npos) << log;
}

TEST(PassManager, AStageThatSettlesIsNotReported) {
  int runs = 0;
  PassManager manager;
  manager.AddStage("quiet", Passes(std::make_unique<Counts>("settles", &runs)), /*max_iterations=*/1);
  auto graph = SmallGraph();
  FusionReport report;
  PassContext context;
  context.report = &report;
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(manager.Run(*graph, context).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(report.iteration_cap_hit.empty());
}

TEST(PassManager, StopAfterEndsAfterTheFirstRunOfThePass) {
  int first = 0, second = 0, later = 0;
  PassManager manager;
  manager.AddStage("one", Passes(std::make_unique<Counts>("first", &first), std::make_unique<Counts>("second", &second)));
  manager.AddStage("two", Passes(std::make_unique<Counts>("later", &later)));
  ASSERT_TRUE(manager.StopAfter("first").ok());
  auto graph = SmallGraph();
  FusionReport report;
  PassContext context;
  context.report = &report;
  ASSERT_TRUE(manager.Run(*graph, context).ok());
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);
  EXPECT_EQ(later, 0);
  EXPECT_EQ(report.stopped_after, "first");
  EXPECT_EQ(report.passes_run, std::vector<std::string>{"first"});
}

TEST(PassManager, StopAfterAndDisableRefuseAnUnknownPassListingTheNames) {
  int runs = 0;
  PassManager manager;
  manager.AddStage("one", Passes(std::make_unique<Counts>("first", &runs), std::make_unique<Counts>("second", &runs)));
  for (const absl::Status& s : {manager.StopAfter("third"), manager.Disable("third")}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(s.message(), "no pass named 'third' in this pipeline (its passes: first, second)");
  }
  ASSERT_TRUE(manager.StopAfter("second").ok());
  ASSERT_TRUE(manager.Disable("second").ok());
  auto graph = SmallGraph();
  PassContext context;
  EXPECT_EQ(manager.Run(*graph, context).code(), absl::StatusCode::kInvalidArgument) << "it would never stop";
}

}  // namespace
}  // namespace attune::testing
