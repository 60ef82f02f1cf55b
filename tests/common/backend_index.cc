#include "tests/common/backend_index.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "onnx/onnx_pb.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

std::string TypeName(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(type.tensor_type().elem_type()));
  if (type.has_sequence_type()) return absl::StrCat("seq(", TypeName(type.sequence_type().elem_type()), ")");
  if (type.has_optional_type()) return absl::StrCat("opt(", TypeName(type.optional_type().elem_type()), ")");
  if (type.has_map_type()) return "map(...)";
  return "UNDEFINED";
}

std::vector<BackendIndexRow> ReadIndexFile(const std::string& path) {
  std::vector<BackendIndexRow> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (cols.size() < 7) continue;
    rows.push_back({cols[0], absl::StrSplit(cols[1], ','), absl::StrSplit(cols[5], ','), absl::StrSplit(cols[6], ',')});
  }
  return rows;
}

// Without INDEX.tsv (Debian's set), each model is parsed once; a few hundred
// small files, well under a second.
std::vector<BackendIndexRow> IndexFromModels(const std::string& node_dir) {
  std::vector<BackendIndexRow> rows;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(node_dir, ec)) {
    std::ifstream in(entry.path() / "model.onnx", std::ios::binary);
    onnx::ModelProto model;
    if (!in || !model.ParseFromIstream(&in)) continue;
    BackendIndexRow row{entry.path().filename().string(), {}, {}, {}};
    for (const onnx::NodeProto& node : model.graph().node())
      if (std::find(row.op_types.begin(), row.op_types.end(), node.op_type()) == row.op_types.end())
        row.op_types.push_back(node.op_type());
    for (const auto& v : model.graph().input()) row.input_dtypes.push_back(TypeName(v.type()));
    for (const auto& v : model.graph().output()) row.output_dtypes.push_back(TypeName(v.type()));
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return rows;
}

// ONNX 1.12's bfloat16 Cast tests store their bfloat16 tensors as uint16, so
// no conforming runtime can pass them; later ONNX releases fixed the data.
bool BrokenIn112(const std::string& name) {
  return name.find("BFLOAT16") != std::string::npos &&
         (name.rfind("test_cast_", 0) == 0 || name.rfind("test_castlike_", 0) == 0);
}

}  // namespace

const std::vector<BackendIndexRow>& BackendIndex() {
  static const std::vector<BackendIndexRow> rows = [] {
    if (!HaveBackendData()) return std::vector<BackendIndexRow>{};
    const std::string index = FindBackendData().root + "/INDEX.tsv";
    std::error_code ec;
    if (fs::exists(index, ec)) return ReadIndexFile(index);
    std::vector<BackendIndexRow> rows = IndexFromModels(BackendNodeDir());
    std::erase_if(rows, [](const BackendIndexRow& row) { return BrokenIn112(row.name); });
    return rows;
  }();
  return rows;
}

std::vector<std::string> CasesOrPlaceholder(std::vector<std::string> names) {
  if (names.empty()) names.push_back(kNoBackendCase);
  return names;
}

std::string NoCaseMessage() {
  if (!HaveBackendData()) return MissingBackendDataMessage();
  return absl::StrCat("the ONNX backend test set at ", FindBackendData().root, " (", BackendSetName(),
                      ") has no case for this suite");
}

}  // namespace attune::testing
