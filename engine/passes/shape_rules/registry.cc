// The shape-rule table, the rule context, and the helpers every family uses.
#include "absl/strings/str_cat.h"
#include "core/common/strings.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune {
namespace shape_rules {

void RuleTable::Add(std::string_view op_type, ShapeRule rule, std::string_view domain) {
  rules_[absl::StrCat(Sv(domain), "::", Sv(op_type))] = rule;
}

ShapeRule RuleTable::Find(std::string_view domain, std::string_view op_type) const {
  if (domain == "ai.onnx") domain = "";
  auto it = rules_.find(absl::StrCat(Sv(domain), "::", Sv(op_type)));
  return it == rules_.end() ? nullptr : it->second;
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const ShapeContext& ctx) {
  if (axis < -rank || axis >= rank)
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.node().Describe(), ": axis ", axis, " is out of range for rank ", rank));
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<SymbolicShape> BroadcastShapes(const std::vector<SymbolicShape>& shapes, const ShapeContext& ctx) {
  size_t rank = 0;
  for (const SymbolicShape& s : shapes) rank = std::max(rank, s.size());
  SymbolicShape out(rank, Dim::Known(1));
  std::vector<bool> first(rank, true);
  for (const SymbolicShape& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      Dim& acc = out[offset + i];
      const Dim& d = s[i];
      if (first[offset + i]) {
        acc = d;
        first[offset + i] = false;
        continue;
      }
      if (d.is_known() && d.value() == 1) continue;
      if (acc.is_known() && acc.value() == 1) {
        acc = d;
        continue;
      }
      if (BroadcastsInto(d, acc)) continue;
      if (BroadcastsInto(acc, d)) {
        acc = d;
        continue;
      }
      if (acc.is_known() && d.is_known())
        return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": shapes ",
                                                       SymbolicShapeToString(s), " do not broadcast (", acc.value(),
                                                       " vs ", d.value(), ")"));
      // A number other than 1 wins: the other dim must be 1 or equal to it in
      // any valid run. Two different symbols: either may be 1, not provable.
      if (d.is_known()) acc = d;
      else if (!acc.is_known()) acc = Dim();
    }
  }
  // Leading dims that only one input had keep that input's dim (set above); a
  // dim only ever set to 1 by the fill is correct as 1.
  return out;
}

void CopyFacts(ShapeContext& ctx, int from, int to) {
  ctx.output(to).type = ctx.input(from).type;
  ctx.output(to).shape = ctx.input(from).shape;
}

int64_t StaticElementCount(const std::optional<SymbolicShape>& shape) {
  if (!shape || !IsStatic(*shape)) return -1;
  int64_t n = 1;
  for (const Dim& d : *shape)
    if (__builtin_mul_overflow(n, d.value(), &n)) return -1;
  return n;
}

std::optional<SymbolicShape> UnknownDims(int64_t length) {
  if (length < 0 || length > kMaxDerivedRank) return std::nullopt;
  return SymbolicShape(static_cast<size_t>(length), Dim());
}

bool MayTrackData(ElementType type, const std::optional<SymbolicShape>& shape) {
  if (type != ElementType::kInt64 && type != ElementType::kInt32 && type != ElementType::kBool) return false;
  const int64_t n = StaticElementCount(shape);
  return n >= 0 && n <= kMaxTrackedElements;
}

std::optional<std::vector<Dim>> BroadcastData(const SymbolicShape& out_shape, const std::vector<const ValueFacts*>& inputs,
                                              const std::function<Dim(const std::vector<Dim>&)>& fn) {
  const int64_t count = StaticElementCount(out_shape);
  if (count < 0 || count > kMaxTrackedElements) return std::nullopt;
  const std::vector<int64_t> out_dims = StaticDims(out_shape);
  for (const ValueFacts* in : inputs)
    if (in == nullptr || !in->data || !in->shape || !IsStatic(*in->shape) || in->shape->size() > out_dims.size())
      return std::nullopt;
  std::vector<Dim> result;
  std::vector<Dim> args(inputs.size());
  for (int64_t flat = 0; flat < count; ++flat) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::vector<int64_t> dims = StaticDims(*inputs[k]->shape);
      const size_t offset = out_dims.size() - dims.size();
      // Row-major index of this output element in input k, broadcasting dims of 1.
      int64_t rest = flat, index = 0, stride = 1;
      for (size_t d = out_dims.size(); d-- > 0;) {
        const int64_t coord = rest % out_dims[d];
        rest /= out_dims[d];
        if (d < offset) continue;
        const int64_t in_dim = dims[d - offset];
        index += (in_dim == 1 ? 0 : coord) * stride;
        stride *= in_dim;
      }
      if (index >= static_cast<int64_t>(inputs[k]->data->size())) return std::nullopt;
      args[k] = (*inputs[k]->data)[index];
    }
    result.push_back(fn(args));
  }
  return result;
}

namespace {

const RuleTable& Table() {
  static const RuleTable* table = [] {
    auto* t = new RuleTable();
    AddElementwiseRules(*t);
    AddMatMulRules(*t);
    AddLayoutRules(*t);
    AddSlicingRules(*t);
    AddReductionRules(*t);
    AddGeneratorRules(*t);
    AddAttentionRules(*t);
    AddScatterRules(*t);
    AddConvRules(*t);
    AddQuantizeRules(*t);
    AddQuantizedRules(*t);
    AddCnnRules(*t);
    AddLossRules(*t);
    AddSelectionRules(*t);
    AddSignalRules(*t);
    AddRecurrentRules(*t);
    AddControlFlowRules(*t);
    AddTrainingRules(*t);
    return t;
  }();
  return *table;
}

template <typename T>
std::vector<Dim> DimsOf(const Tensor& t) {
  std::vector<Dim> out;
  for (T v : t.values<T>()) out.push_back(Dim::Known(static_cast<int64_t>(v)));
  return out;
}

}  // namespace
}  // namespace shape_rules

using shape_rules::MayTrackData;

ValueFacts FactsOfConstant(const Tensor& tensor) {
  ValueFacts f;
  f.type = tensor.type();
  f.shape = ShapeFromDims(tensor.shape());
  f.constant = &tensor;
  if (MayTrackData(f.type, f.shape)) {
    switch (f.type) {
      case ElementType::kInt64: f.data = shape_rules::DimsOf<int64_t>(tensor); break;
      case ElementType::kInt32: f.data = shape_rules::DimsOf<int32_t>(tensor); break;
      case ElementType::kBool: f.data = shape_rules::DimsOf<bool>(tensor); break;
      default: break;
    }
  }
  return f;
}

ShapeContext::ShapeContext(const Node& node, int opset, std::vector<const ValueFacts*> inputs)
    : node_(node), opset_(opset), inputs_(std::move(inputs)), outputs_(node.num_outputs()) {}

const ValueFacts& ShapeContext::input(int i) const {
  static const ValueFacts kNone;
  return has_input(i) ? *inputs_[i] : kNone;
}

Dim ShapeContext::FreshDim(int output, int dim) const {
  const Value* v = node_.output(output);
  // One name whatever the value's name holds: "unk__a-b_0" is not a difference.
  return Dim::Named(absl::StrCat("unk__", v != nullptr ? v->name() : node_.name(), "_", dim));
}

std::optional<std::vector<Dim>> ShapeContext::InputData(int i) const {
  if (!has_input(i)) return std::nullopt;
  return input(i).data;
}

std::optional<std::vector<int64_t>> ShapeContext::InputInts(int i) const {
  auto data = InputData(i);
  if (!data) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *data) {
    if (!d.is_known()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

std::optional<std::vector<int64_t>> ShapeContext::AxesFrom(std::string_view name, int input_index,
                                                           int input_since_opset) const {
  if (opset_ < input_since_opset) {
    auto axes = attrs().GetInts(name, {});
    if (!axes.ok()) return std::nullopt;
    return *axes;
  }
  if (!has_input(input_index)) return std::vector<int64_t>{};
  return InputInts(input_index);
}

ShapeRule FindShapeRule(std::string_view domain, std::string_view op_type) {
  return shape_rules::Table().Find(domain, op_type);
}

std::optional<std::vector<ValueFacts>> InferNodeFacts(const Node& node, int opset,
                                                      std::vector<const ValueFacts*> inputs) {
  ShapeRule rule = FindShapeRule(node.domain(), node.op_type());
  if (rule == nullptr) return std::nullopt;
  ShapeContext ctx(node, opset, std::move(inputs));
  if (!rule(ctx).ok()) return std::nullopt;
  // Data is only meaningful for small integral tensors; drop it elsewhere.
  for (ValueFacts& f : ctx.outputs())
    if (f.data && (!MayTrackData(f.type, f.shape) ||
                   static_cast<int64_t>(f.data->size()) != shape_rules::StaticElementCount(f.shape)))
      f.data.reset();
  return std::move(ctx.outputs());
}

}  // namespace attune
