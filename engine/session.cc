// attune::Session, the public face of SessionImpl.
#include "attune/session.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
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

absl::Status Session::RunInto(const NamedTensors& inputs,
                              const std::vector<std::pair<std::string, TensorView>>& outputs) const {
  ASSIGN_OR_RETURN(NamedTensors results, impl_->Run(inputs));
  for (const auto& [name, view] : outputs) {
    const Tensor* found = nullptr;
    for (const auto& [result_name, tensor] : results)
      if (result_name == name) found = &tensor;
    if (found == nullptr) return absl::InvalidArgumentError(absl::StrCat("the model has no output '", name, "'"));
    if (found->type() != view.type || found->shape() != view.shape)
      return absl::InvalidArgumentError(absl::StrCat("output '", name, "' is ", found->DebugString(),
                                                     " but the caller's buffer is ", ElementTypeName(view.type),
                                                     ShapeToString(view.shape)));
    if (view.data == nullptr && found->byte_size() > 0)
      return absl::InvalidArgumentError(absl::StrCat("output buffer for '", name, "' is null"));
    if (found->byte_size() > 0) std::memcpy(view.data, found->raw_data(), found->byte_size());
  }
  return absl::OkStatus();
}

absl::Status Session::SaveOptimizedModel(const std::string& path) const {
  return ExportOptimizedModelToFile(impl_->graph(), path);
}

std::vector<std::string> ListPasses() { return DefaultPipeline(true)->PassNames(); }

}  // namespace attune
