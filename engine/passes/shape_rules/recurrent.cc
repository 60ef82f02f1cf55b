// Shape rules of the recurrent ops (ops/recurrent/) and CausalConvWithState:
// a dim that is a number in the inputs is computed, any other gets a fresh symbol.
#include <optional>
#include <string>
#include <vector>

#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

// Dim `d` of input `i`, or a fresh symbol for dim `od` of output `o`.
Dim InputDim(const ShapeContext& ctx, int i, size_t d, int o, int od) {
  const std::optional<SymbolicShape>& s = ctx.input(i).shape;
  if (s && d < s->size()) return (*s)[d];
  return ctx.FreshDim(o, od);
}

// Known value of dim `d` of input `i`, divided by `by`; nullopt when unknown.
std::optional<int64_t> KnownDim(const ShapeContext& ctx, int i, size_t d, int64_t by = 1) {
  const std::optional<SymbolicShape>& s = ctx.input(i).shape;
  if (!s || d >= s->size() || !(*s)[d].is_known() || by <= 0) return std::nullopt;
  return (*s)[d].value() / by;
}

Dim KnownOrFresh(const ShapeContext& ctx, std::optional<int64_t> v, int o, int od) {
  return v ? Dim::Known(*v) : ctx.FreshDim(o, od);
}

// query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv] ->
// output [B, T, Hq*dv], present_state [B, Hkv, dk, dv] (past_state's type, else query's).
absl::Status LinearAttentionRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t q_heads, ctx.attrs().GetInt("q_num_heads", 0));
  ASSIGN_OR_RETURN(int64_t kv_heads, ctx.attrs().GetInt("kv_num_heads", 0));
  if (q_heads <= 0 || kv_heads <= 0) return absl::OkStatus();
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<int64_t> d_v = KnownDim(ctx, 2, 2, kv_heads);
  ctx.output(0).shape = SymbolicShape{InputDim(ctx, 0, 0, 0, 0), InputDim(ctx, 0, 1, 0, 1),
                                      KnownOrFresh(ctx, d_v ? std::optional<int64_t>(*d_v * q_heads) : std::nullopt, 0, 2)};
  if (ctx.num_outputs() > 1) {
    ctx.output(1).type = ctx.has_input(3) ? ctx.input(3).type : ctx.input(0).type;
    ctx.output(1).shape = SymbolicShape{InputDim(ctx, 0, 0, 1, 0), Dim::Known(kv_heads),
                                        KnownOrFresh(ctx, KnownDim(ctx, 0, 2, q_heads), 1, 2), KnownOrFresh(ctx, d_v, 1, 3)};
  }
  return absl::OkStatus();
}

// input [B, C, L], weight [C, 1, k] -> output [B, C, L], present_state [B, C, k - 1].
absl::Status CausalConvWithStateRule(ShapeContext& ctx) {
  CopyFacts(ctx, 0, 0);
  if (ctx.num_outputs() > 1) {
    ctx.output(1).type = ctx.input(0).type;
    const std::optional<int64_t> k = KnownDim(ctx, 1, 2);
    ctx.output(1).shape = SymbolicShape{InputDim(ctx, 0, 0, 1, 0), InputDim(ctx, 0, 1, 1, 1),
                                        KnownOrFresh(ctx, k ? std::optional<int64_t>(*k - 1) : std::nullopt, 1, 2)};
  }
  return absl::OkStatus();
}

// RNN, GRU, LSTM: X [seq, batch, input] (layout 1: [batch, seq, input]) ->
// Y [seq, dirs, batch, hidden] ([batch, seq, dirs, hidden]), Y_h and Y_c
// [dirs, batch, hidden] ([batch, dirs, hidden]); hidden from the attribute or R.
absl::Status RnnRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t layout, ctx.attrs().GetInt("layout", 0));
  ASSIGN_OR_RETURN(std::string direction, ctx.attrs().GetString("direction", "forward"));
  ASSIGN_OR_RETURN(int64_t hidden_attr, ctx.attrs().GetInt("hidden_size", -1));
  const Dim dirs = Dim::Known(direction == "bidirectional" ? 2 : 1);
  const size_t seq_axis = layout == 0 ? 0 : 1, batch_axis = layout == 0 ? 1 : 0;
  for (int o = 0; o < ctx.num_outputs(); ++o) {
    ctx.output(o).type = ctx.input(0).type;
    const Dim seq = InputDim(ctx, 0, seq_axis, o, 0), batch = InputDim(ctx, 0, batch_axis, o, 1);
    const Dim hidden = hidden_attr > 0 ? Dim::Known(hidden_attr) : InputDim(ctx, 2, 2, o, 3);
    if (o == 0) ctx.output(o).shape = layout == 0 ? SymbolicShape{seq, dirs, batch, hidden} : SymbolicShape{batch, seq, dirs, hidden};
    else ctx.output(o).shape = layout == 0 ? SymbolicShape{dirs, batch, hidden} : SymbolicShape{batch, dirs, hidden};
  }
  return absl::OkStatus();
}

}  // namespace

void AddRecurrentRules(RuleTable& table) {
  table.Add("LinearAttention", LinearAttentionRule);
  table.Add("CausalConvWithState", CausalConvWithStateRule);
  for (const char* op : {"RNN", "GRU", "LSTM"}) table.Add(op, RnnRule);
}

}  // namespace attune::shape_rules
