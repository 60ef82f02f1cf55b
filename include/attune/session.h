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

/// What `SessionOptions::weights` compresses the float weights of products to.
enum class WeightFormat { kAsIs, kBf16, kInt8, kInt4 };

/// Compression of the float weights of matrix products at load
/// (docs/quantization.md, "Compressing at load"): every MatMul / Gemm whose B
/// is a constant becomes a weight-only product (int8 / int4: quantized
/// blockwise along K; bf16: rounded to bfloat16); the float copy is dropped.
/// Embeddings (Gather) stay as they are.
struct WeightCompressionOptions {
  WeightFormat format = WeightFormat::kAsIs;
  int block_size = 32;      // int8 / int4: a power of two, 16 to 256
  bool symmetric = false;   // true: no zero points (2^(bits-1)); false: uint8 zero points per block
  int accuracy_level = 0;   // MatMulNBits' accuracy_level: 4 quantizes activations to int8 per block
  bool keep_output_products = false;  // leave products writing a graph output (the lm_head) in float
};

/// How a Session loads, optimises and runs its model.
struct SessionOptions {
  /// Threads per Run (OpenMP team size shared with oneDNN); 0 = all cores.
  int threads = 0;
  /// Run the graph optimiser's fusions (attention, ...); canonicalisation always runs.
  bool fuse = true;
  /// Passes to skip, by name (see ListPasses()).
  std::vector<std::string> disabled_passes;
  /// Stop the optimiser after the first run of this pass (see ListPasses());
  /// empty runs every pass. The Session compiles and runs the graph as that
  /// pass left it, and fusion_report() says where it stopped. A name the
  /// pipeline does not have is refused (NotFound, listing the names).
  std::string stop_after_pass;
  /// Check each fusion numerically against the subgraph it replaces, and undo it above tolerance.
  bool verify_fusion = false;
  /// Which fused-attention implementation runs (kAuto picks per shape and CPU).
  AttentionBackendOption attention_backend = AttentionBackendOption::kAuto;
  /// Largest single tensor (model weights and intermediates), in bytes.
  int64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  /// Most iterations one Loop or Scan node runs in a Run; a Loop whose trip
  /// count and condition would take it further fails (ResourceExhausted).
  int64_t max_loop_iterations = int64_t{1} << 24;
  /// Least severe message this Session writes to stderr, while it is created
  /// and while it runs; other Sessions, on any thread, keep their own.
  LogSeverity log_severity = LogSeverity::kWarning;
  /// Compress the float weights of products at load (none by default).
  WeightCompressionOptions weights;
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

class SessionImpl;  // opaque: defined inside the library

/// A KV cache tensor kept in one caller buffer across runs, for
/// Session::RunInto's RunOptions: the past input is read in place as rows
/// [0, length) of `buffer`, and only the new rows of the present output are
/// written, at rows [length, length + new) (new = the present's length minus
/// `length`). Rows outside those are never written. Valid only where
/// Session::CheckCacheBuffer says OK: the past is read by one fused attention
/// node (and shape-only ops) and the present is that node's.
struct CacheBuffer {
  std::string past;     // graph input, e.g. "past_key_values.0.key"
  std::string present;  // graph output, e.g. "present.0.key"
  /// The whole buffer: float32, (batch, heads, capacity, head_dim).
  TensorView buffer;
  int64_t length = 0;  // rows of every (batch, head) that hold the past
  /// In: every row in [0, length) is known finite (false: unknown, the run
  /// checks them). Out: the same for the rows after the run. May be null
  /// (checked every run). Keeps non-finite handling exact without rereading
  /// the whole cache each step.
  bool* rows_finite = nullptr;
};

/// Per-run options of RunInto.
struct RunOptions {
  /// Past/present pairs kept in appended buffers: their past inputs are not
  /// given in RunInto's inputs nor their presents in its outputs.
  std::vector<CacheBuffer> caches;
};

/// A caller-owned output buffer for RunInto: output name and the memory to fill.
using NamedTensorViews = std::vector<std::pair<std::string, TensorView>>;

/// A loaded, optimised, compiled model. Its const methods are safe to call from
/// many threads at once on one Session; each Run has its own scratch memory.
class ATTUNE_API Session {
 public:
  /// Loads a model file (external data resolved beside it). Initializers
  /// stored raw at offsets aligned to their element size, in the .onnx file or
  /// in external data, are not copied: the session reads them from a private
  /// memory mapping of the file. The model file and its external data files
  /// must therefore not be modified, truncated or rewritten in place while the
  /// session (or a tensor it returned that aliases a weight) is alive, as with
  /// any mapped file: the session could see the new bytes, or crash on SIGBUS
  /// if the file shrinks. Replacing the file by renaming a new one over it is safe.
  static absl::StatusOr<std::unique_ptr<Session>> Create(const std::string& model_path,
                                                         const SessionOptions& options = {});
  /// Loads a model from memory (external data is refused).
  static absl::StatusOr<std::unique_ptr<Session>> CreateFromBytes(std::string_view model_bytes,
                                                                  const SessionOptions& options = {});
  /// Frees the model; no Run may be in progress.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Graph inputs in order.
  const std::vector<TensorInfo>& inputs() const;
  /// Graph outputs in order.
  const std::vector<TensorInfo>& outputs() const;
  /// What the optimiser fused and rejected.
  const FusionReport& fusion_report() const;

  /// Runs the model. Every graph input must be given by name; returns every
  /// output. Inputs are read in place, never copied (wrap caller memory with
  /// Tensor::Borrow), and must stay unchanged until Run returns. Returned
  /// tensors may share memory with an input (e.g. a Reshape of it) or with each
  /// other, never with the model: an output that is a model constant is a copy.
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs) const;
  /// Runs the model and writes each named output into the caller's buffer.
  /// Zero copy when the output is computed by a kernel into a fresh tensor and
  /// the buffer has exactly the output's type and shape and is aligned for its
  /// element type: the kernel then writes straight into the buffer. Otherwise
  /// (the output is an input, a constant, or a view of another tensor) it is
  /// computed elsewhere and copied in. Fails if a buffer's type or shape differs
  /// from the computed output, or names no output. Buffers must not overlap the
  /// inputs or each other; after an error their contents are unspecified.
  absl::Status RunInto(const NamedTensors& inputs, const NamedTensorViews& outputs) const;
  /// RunInto with cache buffers (RunOptions::caches): each bound past is read
  /// from its buffer and each bound present appended to it; InvalidArgument
  /// when a buffer does not fit the model or a pair fails CheckCacheBuffer.
  absl::Status RunInto(const NamedTensors& inputs, const NamedTensorViews& outputs,
                       const RunOptions& options) const;
  /// Run with cache buffers: returns every output but the bound presents
  /// (their new rows are in their buffers).
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs, const RunOptions& options) const;
  /// OK when past input `past` and present output `present` may be kept in
  /// one appended CacheBuffer; FailedPrecondition saying why not otherwise
  /// (e.g. attention is not fused, or the present is a plain Concat), and the
  /// caller then keeps a dense past and a separate present.
  absl::Status CheckCacheBuffer(const std::string& past, const std::string& present) const;

  /// Writes the optimised graph as an ONNX model (fused attention as ONNX Attention where expressible).
  /// Weights the session holds packed are written as the model had them, unpacked one at a time.
  /// `path` must not be the file the session was loaded from: it is rewritten in place, and the
  /// session may read weights from a mapping of it (Create); write elsewhere and rename instead.
  absl::Status SaveOptimizedModel(const std::string& path) const;

 private:
  friend class SessionAccess;  // internal tooling (engine/session_access.h)
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

/// Names of the optimiser's passes in pipeline order.
ATTUNE_API std::vector<std::string> ListPasses();

}  // namespace attune
