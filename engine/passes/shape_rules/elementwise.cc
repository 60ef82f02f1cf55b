// Shape rules of elementwise ops: unary ops keep their input's shape, n-ary
// ops broadcast; integer arithmetic and comparisons also run on tracked data
// so that shape computations (Shape -> Mul -> Concat ...) stay symbolic.
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

bool IsIntegerType(ElementType t) { return t == ElementType::kInt64 || t == ElementType::kInt32; }

absl::Status SameAsInput(ShapeContext& ctx) {
  CopyFacts(ctx, 0);
  if (ctx.node().op_type() == "Identity") ctx.output(0).data = ctx.input(0).data;
  // Neg of a tracked shape value (x[-seq:] writes Slice(starts = -seq)): 0 - d for each element.
  if (ctx.node().op_type() == "Neg" && ctx.input(0).data && IsIntegerType(ctx.input(0).type)) {
    std::vector<Dim> negated;
    for (const Dim& d : *ctx.input(0).data) negated.push_back(DimSub(Dim::Known(0), d));
    ctx.output(0).data = negated;
  }
  return absl::OkStatus();
}

absl::Status BoolSameShape(ShapeContext& ctx) {
  ctx.output(0).type = ElementType::kBool;
  ctx.output(0).shape = ctx.input(0).shape;
  return absl::OkStatus();
}

absl::Status DropoutRule(ShapeContext& ctx) {
  CopyFacts(ctx, 0);
  if (ctx.num_outputs() > 1) {
    ctx.output(1).type = ElementType::kBool;
    ctx.output(1).shape = ctx.input(0).shape;
  }
  return absl::OkStatus();
}

// Broadcast shape of all present inputs from `first` on; false if any rank is unknown.
absl::StatusOr<std::optional<SymbolicShape>> BroadcastInputs(const ShapeContext& ctx, int first) {
  std::vector<SymbolicShape> shapes;
  for (int i = first; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    if (!ctx.input(i).shape) return std::optional<SymbolicShape>();
    shapes.push_back(*ctx.input(i).shape);
  }
  if (shapes.empty()) return std::optional<SymbolicShape>();
  auto out = BroadcastShapes(shapes, ctx);
  if (!out.ok()) return out.status();
  return std::optional<SymbolicShape>(*out);
}

std::vector<const ValueFacts*> PresentInputs(const ShapeContext& ctx, int first, int count) {
  std::vector<const ValueFacts*> ins;
  for (int i = first; i < first + count; ++i) ins.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  return ins;
}

// Arithmetic on symbolic elements (dims and integers computed from them).
Dim Arith(const std::string& op, const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    const int64_t x = a.value(), y = b.value();
    int64_t r;
    if (op == "Add") { if (__builtin_add_overflow(x, y, &r)) return Dim(); }
    else if (op == "Sub") { if (__builtin_sub_overflow(x, y, &r)) return Dim(); }
    else if (op == "Mul") { if (__builtin_mul_overflow(x, y, &r)) return Dim(); }
    else if (op == "Div") {
      if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
      r = x / y;
    } else {
      return Dim();
    }
    return Dim::Known(r);
  }
  Dim r;
  if (op == "Add") r = DimAdd(a, b);
  else if (op == "Sub") r = DimSub(a, b);
  else if (op == "Mul") r = DimMul(a, b);
  else if (op == "Div") r = DimDivExact(a, b);
  return r;
}

// Equality of two symbolic elements: true/false when provable. Symbolic
// elements come from dims, so a polynomial with non-negative coefficients
// and a positive constant term is never 0.
std::optional<bool> ProvablyEqual(const Dim& a, const Dim& b) {
  if (a == b) return true;
  auto ea = a.AsExpr();
  auto eb = b.AsExpr();
  if (!ea || !eb) return std::nullopt;
  auto diff = DimExpr::Sub(*ea, *eb);
  if (!diff) return std::nullopt;
  if (diff->is_constant()) return diff->constant_value() == 0;
  // With every symbol >= 0, a polynomial with no negative coefficient and a
  // positive constant term is >= 1 (and its negation <= -1).
  auto negated = DimExpr::Sub(DimExpr(), *diff);
  if ((diff->IsNonNegative() && diff->constant_term() > 0) ||
      (negated && negated->IsNonNegative() && negated->constant_term() > 0))
    return false;
  return std::nullopt;
}

absl::Status BinaryRule(ShapeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  auto shape = BroadcastInputs(ctx, 0);
  if (!shape.ok()) return shape.status();
  ValueFacts& out = ctx.output(0);
  static const char* kComparisons[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  out.type = ctx.input(0).type;
  for (const char* c : kComparisons)
    if (op == c) out.type = ElementType::kBool;
  out.shape = *shape;
  if (!out.shape || !MayTrackData(out.type, out.shape)) return absl::OkStatus();
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    out.data = BroadcastData(*out.shape, PresentInputs(ctx, 0, 2),
                             [&](const std::vector<Dim>& v) { return Arith(op, v[0], v[1]); });
  } else if (op == "Equal") {
    out.data = BroadcastData(*out.shape, PresentInputs(ctx, 0, 2), [](const std::vector<Dim>& v) {
      auto eq = ProvablyEqual(v[0], v[1]);
      return eq ? Dim::Known(*eq ? 1 : 0) : Dim();
    });
  }
  return absl::OkStatus();
}

absl::Status VariadicRule(ShapeContext& ctx) {
  auto shape = BroadcastInputs(ctx, 0);
  if (!shape.ok()) return shape.status();
  ctx.output(0).type = ctx.input(0).type;
  ctx.output(0).shape = *shape;
  return absl::OkStatus();
}

absl::Status WhereRule(ShapeContext& ctx) {
  auto shape = BroadcastInputs(ctx, 0);
  if (!shape.ok()) return shape.status();
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(1).type != ElementType::kUndefined ? ctx.input(1).type : ctx.input(2).type;
  out.shape = *shape;
  if (out.shape && MayTrackData(out.type, out.shape))
    out.data = BroadcastData(*out.shape, PresentInputs(ctx, 0, 3), [](const std::vector<Dim>& v) {
      if (!v[0].is_known()) return Dim();
      return v[0].value() != 0 ? v[1] : v[2];
    });
  return absl::OkStatus();
}

bool IsInteger(ElementType t) {
  switch (t) {
    case ElementType::kInt8: case ElementType::kInt16: case ElementType::kInt32: case ElementType::kInt64:
    case ElementType::kUint8: case ElementType::kUint16: case ElementType::kUint32: case ElementType::kUint64:
    case ElementType::kBool:
      return true;
    default:
      return false;
  }
}

absl::Status CastRule(ShapeContext& ctx) {
  auto to = ctx.attrs().GetInt("to");
  if (!to.ok()) return to.status();
  ValueFacts& out = ctx.output(0);
  out.type = static_cast<ElementType>(*to);
  out.shape = ctx.input(0).shape;
  // Integer to integer keeps tracked values (shape arithmetic often casts int64 <-> int32).
  if (ctx.input(0).data && IsInteger(ctx.input(0).type) && out.type != ElementType::kBool && IsInteger(out.type))
    out.data = ctx.input(0).data;
  const bool to_float = out.type == ElementType::kFloat32 || out.type == ElementType::kFloat64;
  if (ctx.input(0).data && ctx.input(0).data->size() == 1 && IsInteger(ctx.input(0).type) &&
      ctx.input(0).type != ElementType::kBool && to_float) {
    // A number the float type holds exactly (a symbol is a sequence length, see RangeRule).
    const Dim& n = (*ctx.input(0).data)[0];
    const int64_t exact = out.type == ElementType::kFloat32 ? (int64_t{1} << 24) : (int64_t{1} << 53);
    if (!n.is_known() || (n.value() > -exact && n.value() < exact)) out.integer_before_cast = n;
  }
  return absl::OkStatus();
}

absl::Status BitCastRule(ShapeContext& ctx) {
  auto to = ctx.attrs().GetInt("to");
  if (!to.ok()) return to.status();
  ctx.output(0).type = static_cast<ElementType>(*to);
  ctx.output(0).shape = ctx.input(0).shape;
  return absl::OkStatus();
}

absl::Status CastLikeRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(1).type;
  ctx.output(0).shape = ctx.input(0).shape;
  return absl::OkStatus();
}

}  // namespace

void AddElementwiseRules(RuleTable& table) {
  for (const char* op : {"Identity", "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Sigmoid", "Relu",
                         "Erf", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Gelu", "Softplus", "Softsign",
                         "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "Mish", "ThresholdedRelu",
                         "Swish", "Shrink", "Clip", "Softmax", "LogSoftmax", "Hardmax", "CumSum", "CumProd", "Trilu",
                         "ReverseSequence", "MeanVarianceNormalization"})
    table.Add(op, SameAsInput);
  // Rotary embeddings keep their input's shape and type (ONNX's and ONNX Runtime's).
  table.Add("RotaryEmbedding", SameAsInput);
  table.Add("RotaryEmbedding", SameAsInput, "com.microsoft");
  table.Add("ElementwiseChain", [](ShapeContext& ctx) {  // the shape of its inputs of the output's shape
    const auto scalar = ctx.attrs().GetInts("scalar");
    ctx.output(0).type = ElementType::kFloat32;
    if (!scalar.ok()) return absl::OkStatus();
    for (int i = 0; i < ctx.num_inputs() && i < static_cast<int>(scalar->size()); ++i)
      if ((*scalar)[i] == 0) {
        ctx.output(0).shape = ctx.input(i).shape;
        break;
      }
    return absl::OkStatus();
  }, "attune");
  for (const char* op : {"Not", "IsNaN", "IsInf"}) table.Add(op, BoolSameShape);
  table.Add("Dropout", DropoutRule);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "PRelu", "Equal", "Less", "Greater",
                         "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    table.Add(op, BinaryRule);
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) table.Add(op, VariadicRule);
  table.Add("Where", WhereRule);
  table.Add("Cast", CastRule);
  table.Add("CastLike", CastLikeRule);
  table.Add("BitCast", BitCastRule);
}

}  // namespace attune::shape_rules
