// The kernel interface: a factory sees the node once at compile time (Prepare),
// the kernel's const Run is called per inference, possibly from many threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/common/log.h"
#include "core/ir/attribute.h"
#include "core/ir/constant_holder.h"
#include "core/ir/graph.h"

namespace attune {

class SubgraphEvaluator;

/// Which fused-attention implementation to use; declared here, defined with
/// its values in ops/attention/attention_backend.h.
enum class AttentionBackend;

/// Options every kernel may read, set by the session.
struct ExecOptions {
  /// Threads for one run (the OpenMP team size); 0 means all cores.
  int threads = 0;
  /// Largest tensor one kernel may allocate.
  int64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  AttentionBackend attention_backend{};  // kAuto
  /// Most iterations one Loop or Scan node may run (SessionOptions::max_loop_iterations).
  int64_t max_loop_iterations = int64_t{1} << 24;
  /// Where the session's passes and kernels log, at the session's level.
  Logger logger;
};

/// What a kernel factory sees of its node at compile time.
struct KernelInfo {
  std::string_view node_name;
  std::string_view op_type;
  std::string_view domain;  // "" for the default ONNX domain
  int opset = 0;            // the model's opset import for `domain`
  const Attributes* attributes = nullptr;
  /// Per input: whether it is present (ONNX optional inputs may be omitted).
  std::vector<bool> input_present;
  /// Per input: its constant value when known at compile time, else nullptr.
  std::vector<const Tensor*> constant_inputs;
  /// Per input: whether this node is a constant input's only reader (read
  /// once, and no graph output). The kernel may then keep it in a form of its
  /// own and hold it (Kernel::HeldInput), and the plan drops the original.
  std::vector<bool> sole_reader;
  /// Per input: the holder of a constant whose data was released (then
  /// constant_inputs has nullptr). A kernel that takes the held form as it is
  /// holds it in turn; otherwise the plan restores the data and asks again.
  std::vector<std::shared_ptr<const ConstantHolder>> released_constants;
  /// Per input: element type when known at compile time.
  std::vector<std::optional<ElementType>> input_types;
  /// Number of node outputs (omitted optional outputs included).
  int num_outputs = 0;
  const ExecOptions* options = nullptr;
  /// The node's subgraphs (If, Loop, Scan), or nullptr when it has none.
  const Subgraphs* subgraphs = nullptr;
  /// Compiles those subgraphs; nullptr outside a plan (constant folding).
  const SubgraphEvaluator* subgraph_evaluator = nullptr;

  int num_inputs() const { return static_cast<int>(input_present.size()); }
  const Attributes& attrs() const { return *attributes; }
};

/// A KV cache kept in one caller buffer across runs: a past input whose rows
/// are rows [0, length) of `buffer`, and the matching present output, whose
/// new rows the kernel appends at [length, length + new) instead of writing
/// the whole present. Only fused attention's past_key / past_value inputs
/// take one (the plan checks that before binding, engine/exec/plan.h).
struct CacheAppend {
  Tensor buffer;       // float32 [batch][kv_heads][capacity][dim], caller memory
  int64_t length = 0;  // rows of every (batch, head) holding the past
  /// In: every row in [0, length) is known finite (false: unknown, the kernel
  /// checks). Out: the same for [0, length + new). May be null.
  bool* rows_finite = nullptr;
};

/// Inputs and outputs of one kernel invocation.
class KernelContext {
 public:
  KernelContext(std::vector<const Tensor*> inputs, std::vector<Tensor>* outputs, std::vector<bool> outputs_wanted,
                const ExecOptions* options)
      : inputs_(std::move(inputs)), outputs_(outputs), outputs_wanted_(std::move(outputs_wanted)), options_(options) {}

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  /// The i-th input, or nullptr when it is omitted (or i is past the end).
  const Tensor* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  int num_outputs() const { return static_cast<int>(outputs_->size()); }
  /// False for optional outputs nobody reads; a kernel may skip computing them.
  bool output_wanted(int i) const { return i < static_cast<int>(outputs_wanted_.size()) && outputs_wanted_[i]; }

  /// A fresh zero-filled output tensor, within the session's size limit. When
  /// the caller preassigned a buffer of this type and shape to output i, the
  /// output lives in that buffer instead (zeroed first).
  absl::StatusOr<Tensor*> AllocateOutput(int i, ElementType type, std::vector<int64_t> shape);
  /// AllocateOutput without the zero fill, for kernels that write every
  /// element of the output (the fill is a full extra write of it).
  absl::StatusOr<Tensor*> AllocateOutputForOverwrite(int i, ElementType type, std::vector<int64_t> shape);
  /// Per output, a caller-owned buffer to allocate it in (empty Tensor = none);
  /// set by the executor for graph outputs the caller gave memory for.
  void set_preassigned_outputs(const std::vector<Tensor>* buffers) { preassigned_ = buffers; }
  /// Per input, the cache buffer it is bound to (nullptr = none); set by the
  /// executor for the past inputs the caller bound (Session RunOptions).
  void set_cache_appends(const std::vector<const CacheAppend*>* appends) { cache_appends_ = appends; }
  /// The cache buffer input i is bound to, or nullptr.
  const CacheAppend* cache_append(int i) const {
    return cache_appends_ != nullptr && i < static_cast<int>(cache_appends_->size()) ? (*cache_appends_)[i] : nullptr;
  }
  /// Output i as allocated or set so far (an empty tensor before).
  Tensor* output(int i) { return &(*outputs_)[i]; }
  /// Sets an output to an existing tensor (for zero-copy ops such as Reshape).
  void SetOutput(int i, Tensor tensor) { (*outputs_)[i] = std::move(tensor); }
  /// A scratch tensor within the session's size limit, owned by the caller.
  absl::StatusOr<Tensor> AllocateScratch(ElementType type, std::vector<int64_t> shape) const {
    return Tensor::Create(type, std::move(shape), options_->max_tensor_bytes);
  }
  /// AllocateScratch without the zero fill, for scratch written before it is read.
  absl::StatusOr<Tensor> AllocateScratchForOverwrite(ElementType type, std::vector<int64_t> shape) const {
    return Tensor::CreateUninitialized(type, std::move(shape), options_->max_tensor_bytes);
  }

  /// The session's team size, or 1 while workers start late (team_monitor.h).
  int threads() const;
  const ExecOptions& options() const { return *options_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor>* outputs_;
  std::vector<bool> outputs_wanted_;
  const ExecOptions* options_;
  const std::vector<Tensor>* preassigned_ = nullptr;
  const std::vector<const CacheAppend*>* cache_appends_ = nullptr;

  absl::StatusOr<Tensor*> Allocate(int i, ElementType type, std::vector<int64_t> shape, bool zeroed);
};

/// A prepared kernel for one node.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Computes the outputs. Must not modify the kernel: it may run concurrently.
  virtual absl::Status Run(KernelContext& ctx) const = 0;
  /// The holder of constant input i when the kernel keeps that constant in a
  /// form of its own and never reads the input at run time; else nullptr.
  virtual std::shared_ptr<const ConstantHolder> HeldInput(int) const { return nullptr; }
};

/// A kernel whose Run is a callable (for kernels with no prepared state
/// beyond what the lambda captures).
template <typename F>
class FunctionKernel final : public Kernel {
 public:
  explicit FunctionKernel(F f) : f_(std::move(f)) {}
  absl::Status Run(KernelContext& ctx) const override { return f_(ctx); }

 private:
  F f_;
};

template <typename F>
std::unique_ptr<Kernel> MakeKernel(F f) {
  return std::make_unique<FunctionKernel<F>>(std::move(f));
}

using KernelFactory = std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const KernelInfo&)>;

}  // namespace attune
