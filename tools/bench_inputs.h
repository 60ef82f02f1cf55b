// Inputs for attune bench: read from files or generated from shapes.
#pragma once

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "tools/cli_args.h"

namespace attune::cli {

/// One tensor per model input: --input NAME=FILE if given, else random data of
/// the shape from --shape NAME=AxB or the model's shape with --dim SYMBOL=N
/// bound. Integer inputs that index a constant table (Gather) stay below its rows.
absl::StatusOr<NamedTensors> BuildBenchInputs(const Session& session, const Args& args, int64_t max_bytes);

}  // namespace attune::cli
