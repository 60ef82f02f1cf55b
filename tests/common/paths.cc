#include "tests/common/paths.h"

#include <cstdlib>
#include <filesystem>

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSetting = "ATTUNE_ONNX_BACKEND_TESTS";
constexpr const char* kDebianData = "/usr/share/libonnx-testdata/data";

bool HasNodeTests(const std::string& root) {
  std::error_code ec;
  return fs::is_directory(fs::path(root) / "node", ec);
}

// The project's copy comes with INDEX.tsv; Debian's older set does not.
BackendData::Set SetOf(const std::string& root) {
  std::error_code ec;
  return fs::exists(fs::path(root) / "INDEX.tsv", ec) ? BackendData::Set::kOnnx122 : BackendData::Set::kOnnx112;
}

BackendData Locate() {
  BackendData data;
  if (const char* env = std::getenv(kSetting); env != nullptr && *env != '\0') {
    data.where = std::string(kSetting) + "=" + env;
    if (HasNodeTests(env)) {
      data.root = env;
      data.set = SetOf(env);
    }
    return data;  // an explicit setting is never second-guessed
  }
  const std::string shared = SourceDir() + "/../shared/onnx-backend-tests";
  for (const std::string& candidate : {shared, std::string(kDebianData)}) {
    if (HasNodeTests(candidate)) {
      data.root = candidate;
      data.set = SetOf(candidate);
      data.where = candidate;
      return data;
    }
  }
  data.where = shared + " or " + kDebianData;
  return data;
}

}  // namespace

std::string SourceDir() { return ATTUNE_SOURCE_DIR; }
std::string BinaryDir() { return ATTUNE_BINARY_DIR; }

const BackendData& FindBackendData() {
  static const BackendData data = Locate();
  return data;
}

bool HaveBackendData() { return FindBackendData().set != BackendData::Set::kNone; }

std::string BackendNodeDir() {
  const BackendData& data = FindBackendData();
  return data.root.empty() ? std::string("/nonexistent/onnx-backend-tests/node") : data.root + "/node";
}

std::string BackendSetName() {
  switch (FindBackendData().set) {
    case BackendData::Set::kOnnx122: return "onnx-1.22";
    case BackendData::Set::kOnnx112: return "onnx-1.12";
    case BackendData::Set::kNone: break;
  }
  return "none";
}

std::string MissingBackendDataMessage() {
  return std::string("no ONNX backend test data (looked at ") + FindBackendData().where +
         "): install Debian's libonnx-testdata (scripts/setup.sh does) or set " + kSetting +
         " to a folder holding node/test_*/";
}

}  // namespace attune::testing
