// Shape rules of the signal ops: a window is 1-D of `size` samples, in output_datatype.
#include <optional>
#include <vector>

#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status WindowRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t dtype, ctx.attrs().GetInt("output_datatype", 1));
  ctx.output(0).type = static_cast<ElementType>(dtype);
  std::optional<std::vector<int64_t>> size = ctx.InputInts(0);
  ctx.output(0).shape = SymbolicShape{size && size->size() == 1 ? Dim::Known((*size)[0]) : ctx.FreshDim(0, 0)};
  return absl::OkStatus();
}

}  // namespace

void AddSignalRules(RuleTable& table) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) table.Add(op, WindowRule);
}

}  // namespace attune::shape_rules
