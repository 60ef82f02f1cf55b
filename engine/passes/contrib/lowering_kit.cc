#include "engine/passes/contrib/lowering_kit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "engine/passes/graph_edits.h"

namespace attune::contrib {

Value* Lowering::wanted_output(int i) const {
  Value* v = node_->output(i);
  if (v == nullptr) return nullptr;
  return v->uses().empty() && !v->is_graph_output() ? nullptr : v;
}

std::string Lowering::Base(const std::string& tag) const { return absl::StrCat(node_->name(), "/", tag); }

Value* Lowering::Add(const std::string& op, std::vector<Value*> inputs, Attributes attributes, ElementType type,
                     const std::string& domain) {
  return AddMulti(op, std::move(inputs), 1, std::move(attributes), type, domain)[0];
}

std::vector<Value*> Lowering::AddMulti(const std::string& op, std::vector<Value*> inputs, int count,
                                       Attributes attributes, ElementType type, const std::string& domain) {
  const std::string base = Base(op);
  std::vector<Value*> outs;
  for (int i = 0; i < count; ++i) outs.push_back(graph_.AddValue(absl::StrCat(base, "_output", i), type));
  graph_.AddNode(op, domain, graph_.UniqueName(base), std::move(inputs), outs, std::move(attributes));
  written_.push_back(domain.empty() ? std::string(op) : absl::StrCat(domain, ".", op));
  return outs;
}

Value* Lowering::Constant(const std::string& tag, Tensor tensor) {
  return graph_.AddConstant(graph_.UniqueName(Base(tag)), std::move(tensor));
}

Value* Lowering::Int64s(const std::string& tag, const std::vector<int64_t>& values) {
  return Constant(tag, Int64Vector(values));
}

Value* Lowering::FloatScalar(const std::string& tag, float value) { return Constant(tag, Tensor::Scalar<float>(value)); }

void Lowering::Forward(int i, Value* replacement) {
  Value* out = node_->output(i);
  if (out == nullptr || replacement == nullptr) return;
  forwards_.push_back({out, replacement});
}

absl::Status Lowering::Finish(PassContext& context, std::string written_as, std::string details) {
  const std::string name = node_->name();
  const std::string from = node_->domain().empty() ? node_->op_type() : absl::StrCat(node_->domain(), ".", node_->op_type());
  // A graph output keeps its name and value: Identity(replacement) produces
  // it once the vendor node is gone; every other reader reads the replacement.
  std::vector<std::pair<Value*, Value*>> kept;
  for (auto& [out, replacement] : forwards_) {
    const std::vector<Use> uses = out->uses();
    for (const Use& use : uses) graph_.SetNodeInput(use.node, use.index, replacement);
    if (out->is_graph_output()) kept.push_back({out, replacement});
  }
  for (Value* out : node_->outputs())
    if (out != nullptr && (!out->uses().empty() || out->is_graph_output()) &&
        std::none_of(forwards_.begin(), forwards_.end(), [&](const auto& f) { return f.first == out; }))
      return Invalid(absl::StrCat("output ", out->name(), " is not computed by Attune's lowering of this op"));
  if (kept.empty()) {
    RETURN_IF_ERROR(graph_.RemoveNode(node_));
  } else {
    // ReplaceNode frees the vendor node: its name is read before, not through node_ after.
    const std::string extra_base = Base("output");
    graph_.ReplaceNode(node_, "Identity", "", {kept[0].second}, {kept[0].first}, {});
    for (size_t i = 1; i < kept.size(); ++i)
      graph_.AddNode("Identity", "", graph_.UniqueName(extra_base), {kept[i].second}, {kept[i].first});
  }
  node_ = nullptr;  // removed or replaced: freed
  if (context.report != nullptr) {
    OpFusionRecord record;
    record.op = std::move(written_as);
    record.node = name;
    record.pattern = from;
    std::vector<std::string> ops = written_;
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    record.attributes = details.empty() ? absl::StrCat("as ", absl::StrJoin(ops, " + "))
                                        : absl::StrCat(details, "; as ", absl::StrJoin(ops, " + "));
    record.replaced = {name};
    context.report->op_fusions.push_back(std::move(record));
  }
  return absl::OkStatus();
}

std::string Lowering::Where() const {
  return absl::StrCat("node '", node_->name(), "' (", node_->domain().empty() ? "" : node_->domain(),
                      node_->domain().empty() ? "" : ".", node_->op_type(), ")");
}

absl::Status Lowering::Invalid(const std::string& what) const {
  return absl::InvalidArgumentError(absl::StrCat(Where(), ": ", what));
}

absl::Status Lowering::Unsupported(const std::string& what) const {
  return absl::UnimplementedError(absl::StrCat(Where(), ": ", what));
}

absl::StatusOr<int64_t> IntAttr(const Lowering& l, const std::string& name, int64_t default_value) {
  auto v = l.node()->attributes().GetInt(name, default_value);
  if (!v.ok()) return l.Invalid(absl::StrCat("attribute ", name, ": ", v.status().message()));
  return *v;
}

absl::StatusOr<float> FloatAttr(const Lowering& l, const std::string& name, float default_value) {
  auto v = l.node()->attributes().GetFloat(name, default_value);
  if (!v.ok()) return l.Invalid(absl::StrCat("attribute ", name, ": ", v.status().message()));
  return *v;
}

absl::Status CheckKnownAttributes(const Lowering& l, const std::vector<std::string>& known) {
  for (const auto& [name, value] : l.node()->attributes().all())
    if (std::find(known.begin(), known.end(), name) == known.end())
      return l.Unsupported(absl::StrCat("attribute ", name, " is not part of the contract Attune implements (",
                                        absl::StrJoin(known, ", "), ")"));
  return absl::OkStatus();
}

absl::Status CheckArity(const Lowering& l, int required_inputs, int max_inputs, int max_outputs) {
  const Node* n = l.node();
  if (n->num_inputs() > max_inputs)
    return l.Invalid(absl::StrCat("has ", n->num_inputs(), " inputs, the op takes at most ", max_inputs));
  if (n->num_outputs() > max_outputs)
    return l.Invalid(absl::StrCat("has ", n->num_outputs(), " outputs, the op gives at most ", max_outputs));
  for (int i = 0; i < required_inputs; ++i)
    if (n->input(i) == nullptr) return l.Invalid(absl::StrCat("input ", i, " is required"));
  if (n->num_outputs() < 1 || n->output(0) == nullptr) return l.Invalid("output 0 is required");
  return absl::OkStatus();
}

int Rank(const Value* v) { return v != nullptr && v->shape() ? static_cast<int>(v->shape()->size()) : -1; }

int64_t StaticDim(const Value* v, int axis) {
  if (v == nullptr || !v->shape()) return -1;
  const int rank = static_cast<int>(v->shape()->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return -1;
  const Dim& d = (*v->shape())[axis];
  return d.is_known() ? d.value() : -1;
}

}  // namespace attune::contrib
