// attune::Session, the public face of SessionImpl.
#include "attune/session.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/passes/pass_manager.h"
#include "engine/session_impl.h"
#include "importer/attention_export.h"
#include "importer/onnx_importer.h"

namespace attune {
namespace {

ImportOptions ToImportOptions(const SessionOptions& options) {
  ImportOptions import;
  import.max_tensor_bytes = options.max_tensor_bytes;
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
  // Per graph output, the caller's buffer (empty when the caller gave none).
  const std::vector<TensorInfo>& graph_outputs = impl_->outputs();
  std::vector<Tensor> buffers(graph_outputs.size());
  std::vector<size_t> index_of(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [name, view] = outputs[i];
    size_t index = graph_outputs.size();
    for (size_t o = 0; o < graph_outputs.size() && index == graph_outputs.size(); ++o)
      if (graph_outputs[o].name == name) index = o;
    if (index == graph_outputs.size())
      return absl::InvalidArgumentError(absl::StrCat("the model has no output ", QuoteName(name)));
    if (!buffers[index].empty())
      return absl::InvalidArgumentError(absl::StrCat("output ", QuoteName(name), " is given twice"));
    auto buffer = Tensor::Borrow(view);
    if (!buffer.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("output buffer for ", QuoteName(name), ": ", buffer.status().message()));
    buffers[index] = *std::move(buffer);
    index_of[i] = index;
  }
  ASSIGN_OR_RETURN(NamedTensors results, impl_->Run(inputs, nullptr, &buffers));
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
