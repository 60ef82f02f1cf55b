// The models a server serves: found from the command line's files and
// folders, loaded once at start, looked up by name (and version).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "attune/tokenizer.h"

namespace attune::server {

class GenerationEngine;

/// Where a model comes from: its name and its .onnx file.
struct ModelSource {
  std::string name;     // the file's stem, or the folder's name in the KServe layout
  std::string version;  // a numeric folder between the name and the file (Triton's layout), else "1"
  std::string path;
};

/// The sources of MODEL_OR_DIR arguments: a .onnx file is one model named by
/// its stem; a folder holding .onnx files (directly or in one numeric version
/// folder) is one model named by the folder; a folder of such folders (the
/// KServe layout /mnt/models/<name>/...) is one model per sub-folder.
/// InvalidArgument for a path that holds no model, or a name given twice.
absl::StatusOr<std::vector<ModelSource>> FindModelSources(const std::vector<std::string>& paths);

struct ServedModel {
  ModelSource source;
  std::unique_ptr<Session> session;
  std::unique_ptr<GenerationEngine> generation;  // null when the model is not a decoder with a KV cache
  std::unique_ptr<Tokenizer> tokenizer;          // a decoder's tokenizer beside its file, else null (ids only)
  ~ServedModel();
};

}  // namespace attune::server
