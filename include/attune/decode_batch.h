// attune::DecodeBatch: continuous batching of token generation, one decode
// step at a time. Sequences join (their prompts run, together when several
// join at once: a prefill) and leave between steps; every step runs all of them as one batch through the
// decode graph, each keeping its own rows of the KV cache (left-padded and
// masked, as Generator batches prompts). A server runs one DecodeBatch per
// model from one thread, adding requests as they arrive and removing them
// when they end.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/export.h"
#include "attune/generator.h"
#include "attune/session.h"

namespace attune {

class ATTUNE_API DecodeBatch {
 public:
  /// For a decode graph that also takes the prompt (one graph with a dynamic
  /// past length, batch on axis 0 of every cache tensor). InvalidArgument when
  /// the model is not such a decoder.
  static absl::StatusOr<std::unique_ptr<DecodeBatch>> Create(const Session& decode,
                                                             const NameOverrides& overrides = {});
  ~DecodeBatch();
  DecodeBatch(const DecodeBatch&) = delete;
  DecodeBatch& operator=(const DecodeBatch&) = delete;

  const DecoderSignature& signature() const;
  /// False when the graph takes neither position_ids nor derives positions
  /// from the mask: padding would shift positions, so only sequences of equal
  /// length share a step's run (rows of other lengths run in their own).
  bool batches_unequal_lengths() const;

  /// Runs `prompt` alone and adds it as sequence `id` (unique among those in
  /// the batch); returns its first token, chosen with `options` (greedy or
  /// sampled; max_new_tokens, max_context and max_cache_bytes bound the
  /// sequence's length as Generator::Generate does). Only the sampling,
  /// length and cache fields of `options` are read.
  absl::StatusOr<int64_t> Add(int64_t id, const std::vector<int64_t>& prompt, const GenerationOptions& options);
  /// A sequence that joins: its id (unique among those in the batch and those
  /// joining with it), prompt and options, as for Add.
  struct Joining {
    int64_t id = 0;
    const std::vector<int64_t>* prompt = nullptr;
    const GenerationOptions* options = nullptr;
  };
  /// Adds several sequences at once: their prompts run together (left-padded
  /// and masked, in as few runs as their lengths allow; on a graph where
  /// padding would shift positions, prompts of one length per run). Per
  /// sequence, its first token or why it did not join; the others join all the
  /// same. Prompts run together give each sequence the logits it gets alone up
  /// to float rounding (the products of many rows take a GEMM; a decode step's
  /// rows, up to 16, keep the bits of one row alone).
  std::vector<absl::StatusOr<int64_t>> AddAll(const std::vector<Joining>& joining);
  /// Removes a sequence (finished or cancelled); unknown ids are ignored.
  void Remove(int64_t id);
  /// One decode step of every sequence: (id, next token) pairs. A sequence
  /// stays until removed; the caller removes it at its end (eos or length).
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Step();
  /// Sequences in the batch.
  size_t size() const;

 private:
  struct State;
  explicit DecodeBatch(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace attune
