// Where tests find the source tree, the build tree and the ONNX backend test data.
#pragma once

#include <string>

namespace attune::testing {

/// The repository's top folder.
std::string SourceDir();
/// The CMake build folder.
std::string BinaryDir();

/// The ONNX backend node tests some suites compare against. One setting chooses them:
/// ATTUNE_ONNX_BACKEND_TESTS, a folder holding `node/test_*/`. Unset, the first that exists of
/// ../shared/onnx-backend-tests beside the repository (the project's ONNX 1.22 copy) and
/// /usr/share/libonnx-testdata/data (Debian's libonnx-testdata, ONNX 1.12).
struct BackendData {
  enum class Set { kNone, kOnnx122, kOnnx112 };
  Set set = Set::kNone;
  std::string root;   // the folder holding node/; empty when none was found
  std::string where;  // how it was found, for messages
};
const BackendData& FindBackendData();
bool HaveBackendData();
/// root + "/node" (a path that does not exist when there is no data).
std::string BackendNodeDir();
/// The one line a test prints when it skips for want of the data.
std::string MissingBackendDataMessage();
/// "onnx-1.22" or "onnx-1.12": the name of the data set, for allowlists and messages.
std::string BackendSetName();

}  // namespace attune::testing

/// Skips the current test, with the reason, when no backend test data was found.
#define ATTUNE_SKIP_WITHOUT_BACKEND_DATA()                                                 \
  if (!::attune::testing::HaveBackendData()) GTEST_SKIP() << ::attune::testing::MissingBackendDataMessage()
