#include "ops/controlflow/subgraph_call.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/strings.h"
#include "core/common/status_macros.h"

namespace attune::controlflow {
namespace {

const Graph* FindSubgraph(const KernelInfo& info, std::string_view attribute) {
  if (info.subgraphs == nullptr) return nullptr;
  for (const auto& [name, graph] : *info.subgraphs)
    if (name == attribute) return graph.get();
  return nullptr;
}

std::string Described(const Tensor& t) { return t.empty() ? "nothing" : t.DebugString(); }

}  // namespace

absl::StatusOr<int> SubgraphCall::OwnInputs(const KernelInfo& info, std::string_view attribute) {
  const Graph* graph = FindSubgraph(info, attribute);
  if (graph == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("the graph attribute ", QuoteName(attribute), " is missing"));
  const int own = info.num_inputs() - graph->outer_scope_inputs;
  if (own < 0) return absl::InternalError("the node has fewer inputs than its subgraph's outer-scope values");
  return own;
}

absl::StatusOr<SubgraphCall> SubgraphCall::Prepare(const KernelInfo& info, std::string_view attribute,
                                                   int formal_inputs, int outputs) {
  ASSIGN_OR_RETURN(int own, OwnInputs(info, attribute));
  const Graph* graph = FindSubgraph(info, attribute);
  const int formal = static_cast<int>(graph->inputs().size()) - graph->outer_scope_inputs;
  if (formal != formal_inputs)
    return absl::InvalidArgumentError(absl::StrCat("subgraph ", QuoteName(attribute), " has ", formal,
                                                   " inputs; the node gives it ", formal_inputs));
  const int num_outputs = static_cast<int>(graph->outputs().size());
  if (outputs >= 0 && num_outputs != outputs)
    return absl::InvalidArgumentError(absl::StrCat("subgraph ", QuoteName(attribute), " has ", num_outputs,
                                                   " outputs; the node needs ", outputs));
  if (info.subgraph_evaluator == nullptr)
    return absl::UnimplementedError("control flow runs only inside a compiled plan");
  auto prepared = info.subgraph_evaluator->Prepare(*graph, *info.options);
  if (!prepared.ok()) return Annotate(prepared.status(), absl::StrCat("subgraph ", QuoteName(attribute)));
  SubgraphCall call;
  call.prepared_ = *std::move(prepared);
  call.attribute_ = std::string(attribute);
  call.own_node_inputs_ = own;
  call.num_outputs_ = num_outputs;
  for (const Value* out : graph->outputs()) call.output_types_.push_back(out->type());
  return call;
}

absl::StatusOr<std::vector<Tensor>> SubgraphCall::Run(std::vector<Tensor> formal, const KernelContext& ctx) const {
  for (int i = own_node_inputs_; i < ctx.num_inputs(); ++i)
    formal.push_back(ctx.input(i) != nullptr ? *ctx.input(i) : Tensor());
  auto outputs = prepared_->Evaluate(std::move(formal));
  if (!outputs.ok()) return Annotate(outputs.status(), absl::StrCat("subgraph ", QuoteName(attribute_)));
  if (static_cast<int>(outputs->size()) != num_outputs_)
    return absl::InternalError(absl::StrCat("subgraph ", QuoteName(attribute_), " returned ", outputs->size(),
                                            " outputs instead of ", num_outputs_));
  return outputs;
}

absl::StatusOr<bool> OneBool(const Tensor& t, std::string_view what) {
  if (t.type() != ElementType::kBool || t.num_elements() != 1)
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), " must be a bool tensor of one element, got ", Described(t)));
  return *t.data<bool>();
}

absl::StatusOr<int64_t> OneInt64(const Tensor& t, std::string_view what) {
  if (t.type() != ElementType::kInt64 || t.num_elements() != 1)
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), " must be an int64 tensor of one element, got ", Described(t)));
  return *t.data<int64_t>();
}

absl::StatusOr<Tensor> SliceAlongAxis(const Tensor& t, int64_t axis, int64_t index, int64_t max_bytes) {
  std::vector<int64_t> shape = t.shape();
  const int64_t length = shape[axis];
  shape.erase(shape.begin() + axis);
  ASSIGN_OR_RETURN(Tensor slice, Tensor::CreateUninitialized(t.type(), shape, max_bytes));
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= t.shape()[d];
  const size_t inner = slice.num_elements() == 0 ? 0 : slice.byte_size() / static_cast<size_t>(outer);
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(slice.raw_data());
  for (int64_t o = 0; o < outer && inner > 0; ++o)
    std::memcpy(dst + o * inner, src + (o * length + index) * inner, inner);
  return slice;
}

absl::StatusOr<Tensor> StackAlongAxis(const std::vector<Tensor>& parts, int64_t axis, bool reverse,
                                      ElementType type, const std::vector<int64_t>& empty_shape,
                                      int64_t max_bytes) {
  std::vector<int64_t> shape = parts.empty() ? empty_shape : parts[0].shape();
  const int64_t count = static_cast<int64_t>(parts.size());
  shape.insert(shape.begin() + axis, count);
  ASSIGN_OR_RETURN(Tensor out, Tensor::CreateUninitialized(parts.empty() ? type : parts[0].type(), shape, max_bytes));
  if (count == 0 || out.num_elements() == 0) return out;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  const size_t inner = parts[0].byte_size() / static_cast<size_t>(outer);
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t p = 0; p < count; ++p) {
    const int64_t at = reverse ? count - 1 - p : p;
    const char* src = static_cast<const char*>(parts[p].raw_data());
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + (o * count + at) * inner, src + o * inner, inner);
  }
  return out;
}

absl::Status CheckScanPart(const std::vector<Tensor>& parts, const Tensor& next, std::string_view what,
                           int64_t& bytes, int64_t max_bytes) {
  if (next.empty() || next.type() == ElementType::kString)
    return absl::UnimplementedError(absl::StrCat(Sv(what), " is ", Described(next), ", which cannot be stacked"));
  if (!parts.empty() && (next.type() != parts[0].type() || next.shape() != parts[0].shape()))
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), " is ", next.DebugString(), " in iteration ", parts.size(),
                                                   " but ", parts[0].DebugString(), " in the first"));
  bytes += static_cast<int64_t>(next.byte_size());
  if (bytes > max_bytes)
    return absl::ResourceExhaustedError(absl::StrCat(Sv(what), " stacked over ", parts.size() + 1, " iterations exceeds ",
                                                     max_bytes, " bytes, the session's tensor limit"));
  return absl::OkStatus();
}

}  // namespace attune::controlflow
