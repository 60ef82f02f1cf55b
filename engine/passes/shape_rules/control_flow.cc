// If, Loop, Scan: what their outputs are depends on the subgraph that runs
// (If's branches may give different shapes, a loop-carried value may change
// shape per iteration, scan outputs grow by the trip count known only at run
// time), so their outputs are left unknown; the kernels check and allocate at
// run time. The rule exists so that shape inference knows these ops and
// checks nothing it cannot see (the subgraphs are opaque to the passes).
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status OutputsKnownAtRunTime(ShapeContext&) { return absl::OkStatus(); }

}  // namespace

void AddControlFlowRules(RuleTable& table) {
  for (const char* op : {"If", "Loop", "Scan"}) table.Add(op, OutputsKnownAtRunTime);
}

}  // namespace attune::shape_rules
