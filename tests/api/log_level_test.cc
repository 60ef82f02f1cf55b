// SessionOptions::log_severity belongs to its Session: two Sessions created
// at once on two threads, one at debug and one at error, each write exactly
// the messages their own level lets through.
#include <latch>
#include <string>
#include <thread>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "importer/onnx_exporter.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

// y = Gather(data, [7]) on constants, an index out of range: constant folding
// cannot fold the node and says so at debug level, naming it; the session is
// still created (running it would report the error).
std::string ModelWithUnfoldableNode(const std::string& node_name) {
  GraphBuilder b;
  Value* data = b.Constant("data", Floats({3}, {1.0f, 2.0f, 3.0f}));
  Value* index = b.Constant("index", Int64s({7}));
  b.Output(b.Node("Gather", {data, index}, {}, node_name));
  auto bytes = ExportModelToBytes(b.graph());
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.value_or("");
}

int Occurrences(const std::string& text, const std::string& word) {
  int n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

absl::Status Create(const std::string& model, LogSeverity severity) {
  SessionOptions options;
  options.log_severity = severity;
  return Session::CreateFromBytes(model, options).status();
}

TEST(LogLevel, EachSessionLogsAtItsOwnLevel) {
  const std::string verbose = ModelWithUnfoldableNode("gather_in_the_debug_session");
  const std::string quiet = ModelWithUnfoldableNode("gather_in_the_error_session");

  // How many lines one debug Session writes alone.
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(Create(verbose, LogSeverity::kDebug).ok());
  const int per_session = Occurrences(::testing::internal::GetCapturedStderr(), "gather_in_the_debug_session");
  ASSERT_GT(per_session, 0) << "the model no longer makes constant folding log";

  // Both at once, many times over: with one process-wide level, a Session
  // would sooner or later log at the other's.
  constexpr int kRounds = 50;
  ::testing::internal::CaptureStderr();
  std::latch start(2);
  absl::Status verbose_status, quiet_status;
  std::thread debug_thread([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kRounds && verbose_status.ok(); ++i) verbose_status = Create(verbose, LogSeverity::kDebug);
  });
  std::thread error_thread([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kRounds && quiet_status.ok(); ++i) quiet_status = Create(quiet, LogSeverity::kError);
  });
  debug_thread.join();
  error_thread.join();
  const std::string logged = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(verbose_status.ok()) << verbose_status;
  ASSERT_TRUE(quiet_status.ok()) << quiet_status;
  EXPECT_EQ(Occurrences(logged, "gather_in_the_debug_session"), kRounds * per_session);
  EXPECT_EQ(Occurrences(logged, "gather_in_the_error_session"), 0);
}

TEST(LogLevel, OffWritesNothing) {
  const std::string model = ModelWithUnfoldableNode("gather_in_the_silent_session");
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(Create(model, LogSeverity::kOff).ok());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace attune::testing
