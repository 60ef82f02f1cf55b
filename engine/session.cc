// attune::Session, the public face of SessionImpl.
#include "attune/session.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/passes/pass_manager.h"
#include "engine/session_impl.h"
#include "importer/attention_export.h"
#include "importer/onnx_importer.h"

namespace attune {
namespace {

int IndexOf(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (size_t i = 0; i < infos.size(); ++i)
    if (infos[i].name == name) return static_cast<int>(i);
  return -1;
}

ImportOptions ToImportOptions(const SessionOptions& options) {
  ImportOptions import;
  import.max_tensor_bytes = options.max_tensor_bytes;
  import.weights_compressed_at_load = options.weights.format != WeightFormat::kAsIs;
  return import;
}

}  // namespace

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

absl::StatusOr<std::unique_ptr<Session>> Session::Create(const std::string& model_path,
                                                         const SessionOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportModelFromFile(model_path, ToImportOptions(options)));
  ASSIGN_OR_RETURN(std::unique_ptr<SessionImpl> impl, SessionImpl::Create(std::move(graph), options));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Session>> Session::CreateFromBytes(std::string_view model_bytes,
                                                                  const SessionOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportModelFromBytes(model_bytes, "", ToImportOptions(options)));
  ASSIGN_OR_RETURN(std::unique_ptr<SessionImpl> impl, SessionImpl::Create(std::move(graph), options));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs(); }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs(); }
const FusionReport& Session::fusion_report() const { return impl_->report(); }

absl::StatusOr<NamedTensors> Session::Run(const NamedTensors& inputs) const { return impl_->Run(inputs); }

absl::Status Session::RunInto(const NamedTensors& inputs, const NamedTensorViews& outputs) const {
  return RunInto(inputs, outputs, RunOptions{});
}

namespace {

absl::Status CheckCachePair(const SessionImpl& impl, const std::string& past, const std::string& present) {
  const int in = IndexOf(impl.inputs(), past);
  if (in < 0) return absl::InvalidArgumentError(absl::StrCat("the model has no input ", QuoteName(past)));
  const int out = IndexOf(impl.outputs(), present);
  if (out < 0) return absl::InvalidArgumentError(absl::StrCat("the model has no output ", QuoteName(present)));
  return impl.plan().CheckCacheBinding(in, out);
}

// The cache buffers of one run: each past becomes an input viewing the start
// of its buffer at the past's shape (read for the shape only), each present is
// appended in the buffer by the attention kernel.
struct BoundCaches {
  NamedTensors inputs;  // the caller's inputs plus the bound pasts
  std::vector<PlanCacheBinding> caches;
  std::vector<bool> bound_output;  // per graph output
};

absl::StatusOr<BoundCaches> BindCaches(const SessionImpl& impl, const NamedTensors& inputs,
                                       const RunOptions& options) {
  BoundCaches bound;
  bound.inputs = inputs;
  bound.bound_output.assign(impl.outputs().size(), false);
  for (const CacheBuffer& c : options.caches) {
    RETURN_IF_ERROR(CheckCachePair(impl, c.past, c.present));
    const int in = IndexOf(impl.inputs(), c.past);
    const int out = IndexOf(impl.outputs(), c.present);
    const TensorView& v = c.buffer;
    if (v.type != ElementType::kFloat32 || v.shape.size() != 4 || c.length < 0 || c.length > v.shape[2] ||
        v.data == nullptr || reinterpret_cast<uintptr_t>(v.data) % alignof(float) != 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "cache buffer for ", QuoteName(c.past), " is ", ElementTypeName(v.type), ShapeToString(v.shape),
          " holding ", c.length, " rows; expected aligned float32 (batch, heads, capacity, head_dim) with the rows "
          "within the capacity"));
    for (const auto& [name, t] : inputs)
      if (name == c.past)
        return absl::InvalidArgumentError(
            absl::StrCat("input ", QuoteName(name), " is bound to a cache buffer and given as an input too"));
    if (bound.bound_output[out])
      return absl::InvalidArgumentError(absl::StrCat("present ", QuoteName(c.present), " is bound twice"));
    bound.bound_output[out] = true;
    ASSIGN_OR_RETURN(Tensor buffer, Tensor::Borrow(v));
    ASSIGN_OR_RETURN(Tensor past, Tensor::Borrow({v.type, {v.shape[0], v.shape[1], c.length, v.shape[3]}, v.data}));
    bound.inputs.emplace_back(c.past, std::move(past));
    bound.caches.push_back({in, out, CacheAppend{std::move(buffer), c.length, c.rows_finite}});
  }
  return bound;
}

}  // namespace

absl::Status Session::CheckCacheBuffer(const std::string& past, const std::string& present) const {
  return CheckCachePair(*impl_, past, present);
}

absl::StatusOr<NamedTensors> Session::Run(const NamedTensors& inputs, const RunOptions& options) const {
  if (options.caches.empty()) return impl_->Run(inputs);
  ASSIGN_OR_RETURN(const BoundCaches bound, BindCaches(*impl_, inputs, options));
  ASSIGN_OR_RETURN(NamedTensors results, impl_->Run(bound.inputs, nullptr, nullptr, &bound.caches));
  NamedTensors unbound;  // the bound presents live in their buffers
  for (size_t o = 0; o < results.size(); ++o)
    if (!bound.bound_output[o]) unbound.push_back(std::move(results[o]));
  return unbound;
}

absl::Status Session::RunInto(const NamedTensors& inputs, const NamedTensorViews& outputs,
                              const RunOptions& options) const {
  std::optional<BoundCaches> bound;
  if (!options.caches.empty()) {
    ASSIGN_OR_RETURN(bound, BindCaches(*impl_, inputs, options));
  }
  auto is_bound = [&](int o) { return bound.has_value() && bound->bound_output[o]; };

  // Per graph output, the caller's buffer (empty when the caller gave none).
  const std::vector<TensorInfo>& graph_outputs = impl_->outputs();
  std::vector<Tensor> buffers(graph_outputs.size());
  std::vector<size_t> index_of(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [name, view] = outputs[i];
    const int index = IndexOf(graph_outputs, name);
    if (index < 0) return absl::InvalidArgumentError(absl::StrCat("the model has no output ", QuoteName(name)));
    if (!buffers[index].empty() || is_bound(index))
      return absl::InvalidArgumentError(absl::StrCat("output ", QuoteName(name), " is given twice"));
    auto buffer = Tensor::Borrow(view);
    if (!buffer.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("output buffer for ", QuoteName(name), ": ", buffer.status().message()));
    buffers[index] = *std::move(buffer);
    index_of[i] = static_cast<size_t>(index);
  }
  ASSIGN_OR_RETURN(NamedTensors results, impl_->Run(bound ? bound->inputs : inputs, nullptr, &buffers,
                                                    bound ? &bound->caches : nullptr));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [name, view] = outputs[i];
    const Tensor& computed = results[index_of[i]].second;
    if (computed.type() != view.type || computed.shape() != view.shape)
      return absl::InvalidArgumentError(absl::StrCat("output ", QuoteName(name), " is ", computed.DebugString(),
                                                     " but the caller's buffer is ", ElementTypeName(view.type),
                                                     ShapeToString(view.shape)));
    // Computed in place unless the executor could not use the buffer.
    if (computed.raw_data() != view.data && computed.byte_size() > 0)
      std::memcpy(view.data, computed.raw_data(), computed.byte_size());
  }
  return absl::OkStatus();
}

absl::Status Session::SaveOptimizedModel(const std::string& path) const {
  return ExportOptimizedModelToFile(impl_->graph(), path);
}

std::vector<std::string> ListPasses() { return DefaultPipeline(true)->PassNames(); }

}  // namespace attune
