// Where tests find the source tree, the build tree and the shared test data.
#pragma once

#include <string>

namespace attune::testing {

/// The repository's top folder.
std::string SourceDir();
/// The CMake build folder.
std::string BinaryDir();
/// ../shared next to the repository (ONNX backend tests, ONNX Runtime tool);
/// ATTUNE_SHARED_DIR overrides it.
std::string SharedDir();

}  // namespace attune::testing
