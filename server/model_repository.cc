#include "server/model_repository.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "server/generation_engine.h"

namespace attune::server {
namespace fs = std::filesystem;
namespace {

bool IsOnnx(const fs::path& p) {
  std::error_code ec;
  return p.extension() == ".onnx" && fs::is_regular_file(p, ec);
}

bool IsNumeric(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<fs::path> OnnxFilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (IsOnnx(entry.path())) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The one model file of a folder: model.onnx, or the folder's only .onnx file.
absl::StatusOr<fs::path> ModelFileIn(const fs::path& dir, const std::vector<fs::path>& files) {
  for (const fs::path& f : files)
    if (f.filename() == "model.onnx") return f;
  if (files.size() == 1) return files[0];
  return absl::InvalidArgumentError(absl::StrCat("folder '", dir.string(), "' holds ", files.size(),
                                                 " .onnx files and no model.onnx: which one is the model?"));
}

// A folder that is one model: .onnx files in it, or in its highest numeric version folder.
absl::StatusOr<std::optional<ModelSource>> ModelInFolder(const fs::path& dir) {
  std::vector<fs::path> files = OnnxFilesIn(dir);
  const std::string name = dir.filename().string();
  if (!files.empty()) {
    auto file = ModelFileIn(dir, files);
    if (!file.ok()) return file.status();
    return ModelSource{name, "1", file->string()};
  }
  std::optional<std::pair<long long, fs::path>> best;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string v = entry.path().filename().string();
    if (!entry.is_directory(ec) || !IsNumeric(v) || v.size() > 18 || OnnxFilesIn(entry.path()).empty()) continue;
    if (!best || std::stoll(v) > best->first) best = {std::stoll(v), entry.path()};
  }
  if (!best) return std::optional<ModelSource>();
  auto file = ModelFileIn(best->second, OnnxFilesIn(best->second));
  if (!file.ok()) return file.status();
  return ModelSource{name, best->second.filename().string(), file->string()};
}

}  // namespace

absl::StatusOr<std::vector<ModelSource>> FindModelSources(const std::vector<std::string>& paths) {
  std::vector<ModelSource> sources;
  for (const std::string& arg : paths) {
    const fs::path p = fs::path(arg).lexically_normal();
    std::error_code ec;
    if (IsOnnx(p)) {
      sources.push_back({p.stem().string(), "1", p.string()});
      continue;
    }
    if (!fs::is_directory(p, ec))
      return absl::InvalidArgumentError(absl::StrCat("'", arg, "' is neither a .onnx file nor a folder"));
    auto direct = ModelInFolder(p.filename().empty() ? p.parent_path() : p);
    if (!direct.ok()) return direct.status();
    if (direct->has_value()) {
      sources.push_back(**direct);
      continue;
    }
    // The KServe layout: one model per sub-folder.
    std::vector<fs::path> subdirs;
    for (const auto& entry : fs::directory_iterator(p, ec))
      if (entry.is_directory(ec)) subdirs.push_back(entry.path());
    std::sort(subdirs.begin(), subdirs.end());
    size_t found = 0;
    for (const fs::path& sub : subdirs) {
      auto model = ModelInFolder(sub);
      if (!model.ok()) return model.status();
      if (!model->has_value()) continue;
      sources.push_back(**model);
      ++found;
    }
    if (found == 0) return absl::InvalidArgumentError(absl::StrCat("folder '", arg, "' holds no .onnx model"));
  }
  std::set<std::string> names;
  for (const ModelSource& s : sources)
    if (!names.insert(s.name).second)
      return absl::InvalidArgumentError(absl::StrCat("two models are named '", s.name, "'"));
  if (sources.empty()) return absl::InvalidArgumentError("no model given");
  return sources;
}

ServedModel::~ServedModel() = default;

}  // namespace attune::server
