// attune::Generator: token generation from a decoder export with a KV cache.
//
// A decoder exported with torch.onnx.export or a Hugging Face exporter takes
// input_ids (and often attention_mask, position_ids) plus one past key/value
// tensor per layer, and returns logits plus the matching present tensors
// (present = past with the new positions appended on the sequence axis).
// Generator finds that convention from the names and shapes of a Session's
// inputs and outputs, keeps the cache in buffers allocated once for the whole
// run, and runs prefill then one decode step per new token.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/export.h"
#include "attune/session.h"

namespace attune {

class Tokenizer;

/// One layer's cache tensor: the graph input that takes it and the graph
/// output that returns it grown by the new positions.
struct CacheBinding {
  std::string past;     // graph input, e.g. "past_key_values.0.key"; empty in a prefill-only graph
  std::string present;  // graph output, e.g. "present.0.key"
  int layer = -1;       // from the name, or the order found; -1 when unknown
  std::string kind;     // "key", "value" or "kv" (one tensor holding both)
  int seq_axis = 2;     // the axis that grows
};

/// Which graph inputs and outputs play which part (empty name = absent).
struct DecoderSignature {
  std::string input_ids;
  std::string attention_mask;
  std::string position_ids;
  std::string logits;
  std::vector<CacheBinding> cache;
  int64_t vocab_size = -1;  // logits' last dimension, or the token embedding's rows; -1 unknown
  int64_t context = -1;     // position embedding rows; -1 when not discoverable
  /// The graph computes positions from the attention mask (a CumSum over the
  /// mask's values, as OPT, GPTBigCode and BLOOM's ALiBi do), so left padding
  /// shifts no position even without a position_ids input.
  bool positions_from_mask = false;
  /// Past inputs named for the encoder (or cross-attention) with no present
  /// output: a cache the graph reads as it is, as T5's and Whisper's decoders
  /// with past read the encoder's keys and values. They are not paired.
  std::vector<std::string> encoder_cache;
};

/// Human-readable lines: one per role, then one per cache binding, e.g.
/// "past_key_0 -> present_key_0  (layer 0 key, axis 2)".
ATTUNE_API std::vector<std::string> DescribeDecoderSignature(const DecoderSignature& signature);

/// Overrides for the discovery: "input_ids", "attention_mask", "position_ids"
/// or "logits" mapped to a graph name, or a past input name mapped to its
/// present output name.
using NameOverrides = std::vector<std::pair<std::string, std::string>>;

/// Finds the decoder convention of a session. `require_past` false accepts a
/// prefill graph (present outputs, no past inputs). InvalidArgument naming
/// what is missing when the model is not a decoder.
ATTUNE_API absl::StatusOr<DecoderSignature> FindDecoderSignature(const Session& session,
                                                                 const NameOverrides& overrides = {},
                                                                 bool require_past = true);

/// How one cache tensor is kept between decode steps (GenerationOptions::inplace_cache).
struct CachePath {
  std::string past;
  /// true: one buffer, the past read in place and only the new rows written
  /// (Session CacheBuffer). false: two dense buffers in turn, the model
  /// writing present = Concat(past, new) whole into the other each step.
  bool appended = false;
  std::string why_not;  // when not appended: Session::CheckCacheBuffer's reason, or the layout's
};

/// How tokens are chosen and how long generation runs.
struct GenerationOptions {
  int64_t max_new_tokens = 32;
  int64_t eos_id = -1;  // stop a prompt at this id (-1: never)
  std::vector<int64_t> stop_ids;  // more ids that end a prompt as eos_id does (a tokenizer's other EOS tokens)
  bool greedy = true;   // argmax; otherwise sample with the fields below
  float temperature = 1.0f;
  int64_t top_k = 0;   // 0 = the whole vocabulary
  float top_p = 1.0f;  // nucleus mass kept (1 = all)
  uint64_t seed = 0;   // sampling is reproducible for a seed (own PRNG, per prompt)
  /// true: the cache lives in buffers allocated once: one per cache tensor
  /// that the model's fused attention appends to in place, else two in turn
  /// (Generator::cache_paths says which). false: every step's presents are
  /// returned in fresh memory and copied into the next step's past (for
  /// comparison).
  bool inplace_cache = true;
  /// With inplace_cache: false keeps every cache tensor in two buffers in
  /// turn even where it could be appended in place (for comparison).
  bool append_cache = true;
  /// Longest sequence (prompt + new tokens) allowed when the model's context
  /// is not discoverable; 0 = no limit. A discovered context wins if smaller.
  int64_t max_context = 0;
  /// Cap on one cache buffer, in bytes (SessionOptions::max_tensor_bytes by default).
  int64_t max_cache_bytes = kDefaultMaxTensorBytes;
};

/// What a token callback sees after each step.
struct TokenEvent {
  int64_t step = 0;             // 0 for the token from the prompt's logits
  std::vector<int64_t> tokens;  // one per prompt; -1 for a prompt that already ended
  double ms = 0;                // this step's model time
};
/// Called after every step; return false to stop early.
using TokenCallback = std::function<bool(const TokenEvent&)>;

/// Called with a prompt's index and its next piece of text (whole UTF-8 characters).
using TextCallback = std::function<void(size_t prompt, const std::string& text)>;

struct GenerationResult {
  std::vector<std::vector<int64_t>> generated_ids;  // per prompt, eos included when reached
  double prefill_ms = 0;
  std::vector<double> step_ms;  // decode steps only (the first token comes from prefill)
  double token_ms_median = 0;
  double token_ms_p90 = 0;
  double tokens_per_s = 0;         // tokens produced by decode steps (all prompts) per second of them
  std::vector<std::string> notes;  // e.g. positions shifted by padding when the model has no position_ids
};

struct TextGenerationResult {
  std::vector<std::string> text;                 // per prompt: the generated text
  std::vector<std::vector<int64_t>> prompt_ids;  // per prompt: the encoded prompt
  GenerationResult tokens;                       // generated_ids (cut at a stop string) and timings
};

/// Generates from one decode session, or a prefill session plus a decode
/// session. The sessions must outlive the Generator. One Generate runs at a
/// time per Generator; sessions may be shared with other users.
class ATTUNE_API Generator {
 public:
  /// One decode graph: the prompt runs through it with an empty cache.
  static absl::StatusOr<std::unique_ptr<Generator>> Create(const Session& decode, const NameOverrides& overrides = {});
  /// A prefill graph (no past inputs) for the prompt, then the decode graph.
  static absl::StatusOr<std::unique_ptr<Generator>> Create(const Session& prefill, const Session& decode,
                                                           const NameOverrides& overrides = {});
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  const DecoderSignature& decode_signature() const;
  /// Per decode cache binding (decode_signature().cache order), the path its
  /// tensor takes with inplace_cache.
  const std::vector<CachePath>& cache_paths() const;

  /// Runs the prompts as one batch (left-padded to the longest, masked by
  /// attention_mask) and returns each prompt's new tokens. InvalidArgument for
  /// an id outside the vocabulary, a sequence longer than the context, or
  /// prompts of different lengths on a model without attention_mask;
  /// ResourceExhausted when a cache buffer exceeds max_cache_bytes.
  absl::StatusOr<GenerationResult> Generate(const std::vector<std::vector<int64_t>>& prompts,
                                            const GenerationOptions& options, const TokenCallback& on_token = {}) const;

  /// Text in, text out: each prompt encoded with `tokenizer` (its special
  /// tokens added), generated as Generate does, and decoded without special
  /// tokens. Unless options.eos_id is set, the tokenizer's EOS ids end a
  /// prompt. A prompt also ends when its text reaches one of `stop` (the text
  /// is cut before it, and its ids after the token that completed it).
  /// `on_text` receives the text as it comes, never a partial character nor
  /// the start of a stop string. InvalidArgument when the tokenizer has ids
  /// the model's logits do not cover.
  absl::StatusOr<TextGenerationResult> GenerateText(const Tokenizer& tokenizer, const std::vector<std::string>& prompts,
                                                    const GenerationOptions& options,
                                                    const std::vector<std::string>& stop = {},
                                                    const TextCallback& on_text = {}) const;

 private:
  struct State;
  explicit Generator(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace attune
