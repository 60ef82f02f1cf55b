#include "engine/passes/contrib/reduce_helpers.h"

#include <cstring>

namespace attune::contrib {

Value* Reduce(Lowering& l, const char* op, Value* x, std::vector<int64_t> axes, bool keepdims) {
  const int opset = l.graph().OpsetFor("");
  const bool axes_input = std::strcmp(op, "ReduceSum") == 0 ? opset >= 13 : opset >= 18;
  Attributes a;
  a.Set("keepdims", int64_t{keepdims ? 1 : 0});
  if (axes_input) return l.Add(op, {x, l.Int64s("axes", axes)}, std::move(a));
  a.Set("axes", std::move(axes));
  return l.Add(op, {x}, std::move(a));
}

Value* InverseRms(Lowering& l, Value* x, float epsilon) {
  Value* square = l.Add("Mul", {x, x}, {}, x->type());
  Value* mean = Reduce(l, "ReduceMean", square, {-1}, true);
  Value* shifted = l.Add("Add", {mean, l.FloatScalar("epsilon", epsilon)}, {}, x->type());
  return l.Add("Reciprocal", {l.Add("Sqrt", {shifted}, {}, x->type())}, {}, x->type());
}

}  // namespace attune::contrib
