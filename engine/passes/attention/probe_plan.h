// The probe machinery the mask proofs share: which sizes a mask is evaluated
// at (its own constants, past lengths, a buffer's length), how the model's
// symbols are bound for each, and how an evaluated mask is compared with
// the bottom-right-aligned causal mask or a sliding window.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/rewrite/dim_binding.h"

namespace attune::attention {

/// Dims the proofs do not vary (batch, ...) get this size.
inline constexpr int64_t kOtherDimSize = 2;
/// An additive mask entry or masked score at or below this hides its key.
inline constexpr double kBlockingValue = -1e4;

inline absl::Status NotCausal(std::string reason) { return absl::FailedPreconditionError(std::move(reason)); }

struct Probe {
  int64_t t = 0;
  int64_t past = 0;  // keys before the first query's position: kv_len - t
  std::string Label() const;
};

/// The lengths of the attention whose mask is probed.
struct ProbeDims {
  Dim q_len;                    // the scores' query dim
  Dim kv_len;                   // the scores' key dim (past + new keys)
  std::optional<Dim> past_len;  // the past keys' length dim, with a KV cache
};

/// How the probe sizes map onto the model's symbols.
struct ProbePlan {
  std::optional<std::string> q_symbol;     // bound to T
  std::optional<int64_t> q_fixed;
  std::optional<std::string> past_symbol;  // bound to the past length
  std::optional<int64_t> past_fixed;
  std::optional<std::string> kv_symbol;    // a free key-length symbol, bound to T + past
  bool past_varies = false;
  std::set<std::string> other_symbols;     // bound to kOtherDimSize
};

/// The plan for `dims`, with every other symbol of `sources`' shapes bound to
/// kOtherDimSize; FailedPrecondition when a length is not a plain symbol or known.
absl::StatusOr<ProbePlan> PlanProbes(const ProbeDims& dims, const std::vector<const Value*>& sources);

/// Every probe length as the query length (with past 0 and a short past),
/// and, with a KV cache, every probe length as the past for short queries; a
/// mask buffer's length bounds them (the model cannot run beyond it).
std::vector<Probe> ProbeSizes(const ProbePlan& plan, const std::vector<int64_t>& lengths, int64_t buffer_length);

DimBinding BindingFor(const ProbePlan& plan, const Probe& p, const ProbeDims& dims);

/// One evaluated probe: blocked[s][i][j] flattened, for every leading slice s.
struct Evaluated {
  Probe probe;
  int64_t slices = 1, rows = 0, cols = 0;
  std::vector<bool> blocked;
  bool at(int64_t s, int64_t i, int64_t j) const { return blocked[(s * rows + i) * cols + j]; }
};

/// Whether bottom-right-aligned causal attention (with `window` > 0, a
/// sliding window) hides key j from query i, with offset = keys - queries.
bool ExpectedBlocked(int64_t i, int64_t j, int64_t offset, int64_t window);

struct Mismatch {
  const Evaluated* probe;
  int64_t row, col;
  bool actual_blocked;
};
std::optional<Mismatch> FirstMismatch(const std::vector<Evaluated>& probes, int64_t window);

/// The window a row shows when its open keys are exactly [lo, i + offset]; 0 otherwise.
int64_t WindowOfRow(const Evaluated& e, int64_t row);

/// The structure every probe shows: open (nothing hidden), causal, or a
/// sliding window; FailedPrecondition naming the first differing entry.
struct Structure {
  bool open = false;
  int64_t window = 0;
};
absl::StatusOr<Structure> StructureOf(const std::vector<Evaluated>& probes);

}  // namespace attune::attention
