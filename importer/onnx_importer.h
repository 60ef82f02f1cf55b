// Reads an ONNX ModelProto into the graph IR: metadata, opsets, initializers in
// every storage form (external data confined to the model's folder), inputs,
// outputs, value_info shapes, nodes and attributes, model-local functions inlined.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "importer/import_options.h"

namespace attune {

/// The newest versions Attune knows the meaning of: those of ONNX 1.22, whose
/// backend tests the conformance run covers. A model from a later release may
/// mean something else by the same op, so it is refused, not guessed at.
inline constexpr int64_t kNewestIrVersion = 13;
inline constexpr int kNewestDefaultOpset = 27;

/// Imports the model at `path`; external data is looked up in the model's folder.
/// Non-bool initializers stored raw (inline raw_data or external data) at
/// offsets that are multiples of their element size use a private mapping of
/// their file in place (importer/mapped_file.h); the files must not change
/// while the graph or a tensor from it lives. Everything else is copied.
/// Errors: NotFound (no such file), InvalidArgument (malformed model),
/// Unimplemented (a feature Attune does not support), ResourceExhausted (limits).
absl::StatusOr<std::unique_ptr<Graph>> ImportModelFromFile(const std::string& path, const ImportOptions& options = {});

/// Imports a serialized model. `base_dir` is the folder external data lives in;
/// empty means the model may not use external data.
absl::StatusOr<std::unique_ptr<Graph>> ImportModelFromBytes(std::string_view bytes, const std::string& base_dir,
                                                            const ImportOptions& options = {});

}  // namespace attune
