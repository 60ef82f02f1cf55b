// attune::Session: load an ONNX model once, run it many times, from many threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/export.h"
#include "attune/fusion_report.h"
#include "attune/tensor.h"

namespace attune {

/// Which implementation runs fused attention.
enum class AttentionBackendOption { kAuto, kSimd, kOneDnn, kReference };

/// Log verbosity for messages Attune writes to stderr.
enum class LogSeverity { kDebug, kInfo, kWarning, kError, kOff };

/// How a Session loads, optimises and runs its model.
struct SessionOptions {
  /// Threads per Run (OpenMP team size shared with oneDNN); 0 = all cores.
  int threads = 0;
  /// Run the graph optimiser's fusions (attention, ...); canonicalisation always runs.
  bool fuse = true;
  /// Passes to skip, by name (see ListPasses()).
  std::vector<std::string> disabled_passes;
  /// Check each fusion numerically against the subgraph it replaces, and undo it above tolerance.
  bool verify_fusion = false;
  AttentionBackendOption attention_backend = AttentionBackendOption::kAuto;
  /// Largest single tensor (model weights and intermediates), in bytes.
  int64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  LogSeverity log_severity = LogSeverity::kWarning;
};

/// Name, element type and shape of a model input or output; a dimension is
/// a number or a symbol such as "batch" (shape_symbols[i] non-empty, shape[i] == -1).
struct TensorInfo {
  std::string name;
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;               // -1 for a symbolic or unknown dimension
  std::vector<std::string> shape_symbols;   // the symbol's name, or "" for known/unknown
  bool has_shape = false;                   // false when even the rank is unknown
};

/// A named tensor, for Run's inputs and outputs.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class SessionImpl;

/// A loaded, optimised, compiled model. Run is const and thread-safe.
class ATTUNE_API Session {
 public:
  /// Loads a model file (external data resolved beside it).
  static absl::StatusOr<std::unique_ptr<Session>> Create(const std::string& model_path,
                                                         const SessionOptions& options = {});
  /// Loads a model from memory (external data is refused).
  static absl::StatusOr<std::unique_ptr<Session>> CreateFromBytes(std::string_view model_bytes,
                                                                  const SessionOptions& options = {});
  ~Session();

  /// Graph inputs in order.
  const std::vector<TensorInfo>& inputs() const;
  /// Graph outputs in order.
  const std::vector<TensorInfo>& outputs() const;
  /// What the optimiser fused and rejected.
  const FusionReport& fusion_report() const;

  /// Runs the model. Every graph input must be given by name; returns every output.
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs) const;
  /// Runs the model and copies each named output into the caller's buffer;
  /// fails if a buffer's type or shape differs from the computed output.
  absl::Status RunInto(const NamedTensors& inputs, const std::vector<std::pair<std::string, TensorView>>& outputs) const;

  /// Writes the optimised graph as an ONNX model (fused attention as ONNX Attention where expressible).
  absl::Status SaveOptimizedModel(const std::string& path) const;

  /// Internal access for the CLI and tests.
  const SessionImpl& impl() const { return *impl_; }

 private:
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

/// Names of the optimiser's passes in pipeline order.
ATTUNE_API std::vector<std::string> ListPasses();

}  // namespace attune
