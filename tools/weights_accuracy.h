// What compressing the weights did to a model's outputs: the compressed
// session and a float32 one of the same file run on one reference input, and
// the first float output (the logits) compared.
#pragma once

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "tools/cli_args.h"

namespace attune::cli {

struct WeightAccuracy {
  std::string output;       // the output compared
  std::string input_source; // "given inputs" or "generated input"
  double max_relative_error = 0;  // max |q - f| / max |f| over the output
  int64_t rows = 0;               // rows of the last axis
  int64_t top1_agree = 0;         // rows whose arg-max over the last axis is the same
};

/// Inputs for the comparison: those `given` (by name), the others generated
/// deterministically from the declared shapes (a batch dim 1, a past dim 0,
/// other symbolic dims 8; integer ids below the vocabulary, the last dim of
/// the first output; masks of ones; positions 0, 1, ...).
absl::StatusOr<NamedTensors> ReferenceInputs(const Session& session, const NamedTensors& given);

/// Runs `float_path` without `options.weights` and `compressed_path` with
/// them, one session at a time, on ReferenceInputs, and compares the outputs.
absl::StatusOr<WeightAccuracy> MeasureWeightAccuracy(const std::string& float_path, const std::string& compressed_path,
                                                     const SessionOptions& options, const NamedTensors& given);

/// One line: "accuracy   int4 block 32 asymmetric vs float32 (generated input): logits max relative error ..., top-1 ...".
std::string FormatWeightAccuracy(const WeightCompressionOptions& weights, const WeightAccuracy& accuracy);

/// For a command with --weights (and without --no-accuracy-report): prints
/// the accuracy line to `out`, or why it could not be measured (the command
/// goes on either way); nothing without --weights.
void PrintWeightAccuracy(const Args& args, std::FILE* out, const std::string& model_path,
                         const SessionOptions& options, const NamedTensors& given);

}  // namespace attune::cli
