#include "tests/common/paths.h"

#include <cstdlib>

namespace attune::testing {

std::string SourceDir() { return ATTUNE_SOURCE_DIR; }
std::string BinaryDir() { return ATTUNE_BINARY_DIR; }
std::string SharedDir() {
  if (const char* env = std::getenv("ATTUNE_SHARED_DIR")) return env;
  return SourceDir() + "/../shared";
}

}  // namespace attune::testing
