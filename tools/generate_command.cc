// attune generate: text generation from a decoder export, the KV cache kept in place.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "attune/generator.h"
#include "attune/tokenizer.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/generate/detokenizer.h"
#include "nlohmann/json.hpp"
#include "tools/command_common.h"
#include "tools/commands.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune generate MODEL.onnx --prompt TEXT [--prompt TEXT ...] [--tokenizer FILE] [options]\n"
    "       attune generate MODEL.onnx --prompt-ids ID,ID,... [--prompt-ids ...] [options]\n"
    "\n"
    "Generates tokens from a decoder exported with its KV cache (past/present key and value per layer).\n"
    "MODEL.onnx is the decode graph (past inputs, present outputs); with --decode-model it is the\n"
    "prefill graph (no past inputs) and DECODE.onnx the decode graph. One decode graph with a dynamic\n"
    "past length is enough: the prompt then runs through it with an empty cache. Several prompts run\n"
    "as one batch, left-padded with an attention_mask. A --prompt is text, encoded with the model's\n"
    "tokenizer (--tokenizer, else tokenizer.json or tokenizer.model beside MODEL.onnx); generation then\n"
    "stops at the tokenizer's end-of-sequence tokens and the output is text.\n"
    "\n"
    "  --decode-model FILE      the decode graph when MODEL.onnx is a separate prefill graph\n"
    "  --prompt TEXT            one prompt as text (repeatable: a batch)\n"
    "  --prompt-ids IDS         comma-separated token ids of one prompt (repeatable: a batch)\n"
    "  --tokenizer FILE         tokenizer.json or tokenizer.model (or a folder holding one): encodes\n"
    "                           --prompt and decodes the generated ids\n"
    "  --stop STRING            end a prompt when its text reaches STRING, cut before it (repeatable)\n"
    "  --max-new-tokens N       tokens to generate per prompt (default 32)\n"
    "  --eos-id ID              stop a prompt when it produces ID (also the padding id); with a\n"
    "                           tokenizer, its end-of-sequence ids are the default\n"
    "  --greedy                 argmax decoding (the default when no sampling option is given)\n"
    "  --temperature T          sample at temperature T (default 1 when sampling)\n"
    "  --top-k K                sample from the K most likely tokens\n"
    "  --top-p P                sample from the smallest set of tokens with probability >= P\n"
    "  --seed S                 sampling seed (default 0); the same seed gives the same tokens\n"
    "  --vocab FILE             tokenizer.json or vocab.json: print the text of the ids (byte-level BPE\n"
    "                           and SentencePiece decoders)\n"
    "  --map FROM=TO            override the convention found: PAST_INPUT=PRESENT_OUTPUT, or\n"
    "                           input_ids|attention_mask|position_ids|logits=NAME (repeatable)\n"
    "  --max-context N          longest sequence allowed when the model's context is not discoverable\n"
    "  --no-inplace-cache       copy each step's presents into the next past (for comparison)\n"
    "  --warmup N               untimed short generations first (default 0): the first run of a model\n"
    "                           pays one-time set-up costs that would show in the prefill time\n"
    "  --json                   print one JSON object (generated_ids, text with a tokenizer, timings)\n"
    "                           on the last line\n"
    "  --show-convention        print the inputs and outputs found for each role, and the path of each\n"
    "                           cache tensor (appended in place or ping-pong), before generating\n"
    "\n"
    "The summary gives the prompt (prefill) time, the decode steps' median and p90 time, and decode\n"
    "tokens/s (tokens of all prompts produced by decode steps per second; the first token comes from\n"
    "the prefill). On a terminal a single prompt's text (or ids) is printed as it comes.\n";

absl::StatusOr<std::vector<int64_t>> ParseIds(const std::string& text) {
  ASSIGN_OR_RETURN(std::vector<int64_t> ids, ParseIdList("prompt-ids", text));
  if (ids.empty()) return absl::InvalidArgumentError("--prompt-ids needs at least one id");
  return ids;
}

absl::StatusOr<NameOverrides> ParseMap(const Args& args) {
  NameOverrides overrides;
  for (const std::string& spec : args.Values("map")) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return absl::InvalidArgumentError(absl::StrCat("--map expects FROM=TO, got ", QuoteName(spec)));
    overrides.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  }
  return overrides;
}

absl::StatusOr<GenerationOptions> GenerationOptionsFromArgs(const Args& args, int64_t max_bytes) {
  GenerationOptions o;
  ASSIGN_OR_RETURN(o.max_new_tokens, args.Int("max-new-tokens", 32));
  if (o.max_new_tokens < 1 || o.max_new_tokens > (int64_t{1} << 20))
    return absl::InvalidArgumentError("--max-new-tokens must be between 1 and 1048576");
  ASSIGN_OR_RETURN(o.eos_id, args.Int("eos-id", -1));
  const bool sampling = args.Has("temperature") || args.Has("top-k") || args.Has("top-p");
  if (sampling && args.Has("greedy"))
    return absl::InvalidArgumentError("--greedy cannot be combined with --temperature, --top-k or --top-p");
  o.greedy = !sampling;
  ASSIGN_OR_RETURN(const double temperature, args.Double("temperature", 1.0));
  if (!(temperature > 0)) return absl::InvalidArgumentError("--temperature must be positive");
  o.temperature = static_cast<float>(temperature);
  ASSIGN_OR_RETURN(o.top_k, args.Int("top-k", 0));
  ASSIGN_OR_RETURN(const double top_p, args.Double("top-p", 1.0));
  if (!(top_p > 0) || top_p > 1) return absl::InvalidArgumentError("--top-p must be in (0, 1]");
  o.top_p = static_cast<float>(top_p);
  if (auto seed = args.Value("seed")) {
    uint64_t s;
    if (!absl::SimpleAtoi(*seed, &s))
      return absl::InvalidArgumentError(absl::StrCat("--seed needs an unsigned integer, got '", *seed, "'"));
    o.seed = s;
  }
  ASSIGN_OR_RETURN(o.max_context, args.Int("max-context", 0));
  o.inplace_cache = !args.Has("no-inplace-cache");
  o.max_cache_bytes = max_bytes;
  return o;
}

// The sessions and the generator of one command, and which path the cache takes.
struct Loaded {
  std::unique_ptr<Session> first, decode;
  std::unique_ptr<Generator> generator;
  std::string cache_path;  // "append", "ping-pong", both, or "copy"
};

absl::StatusOr<Loaded> LoadGenerator(const Args& args, const GenerationOptions& options, bool json) {
  ASSIGN_OR_RETURN(SessionOptions session_options, SessionOptionsFromArgs(args));
  ASSIGN_OR_RETURN(NameOverrides overrides, ParseMap(args));
  Loaded loaded;
  const std::string model_path = args.positionals()[0];
  ASSIGN_OR_RETURN(loaded.first, Session::Create(model_path, session_options));
  if (auto decode_path = args.Value("decode-model")) {
    ASSIGN_OR_RETURN(loaded.decode, Session::Create(*decode_path, session_options));
    ASSIGN_OR_RETURN(loaded.generator, Generator::Create(*loaded.first, *loaded.decode, overrides));
  } else {
    auto g = Generator::Create(*loaded.first, overrides);
    if (!g.ok() && FindDecoderSignature(*loaded.first, overrides, false).ok())
      return absl::InvalidArgumentError(absl::StrCat(
          model_path,
          " is a prefill graph (present outputs, no past inputs): give the decode graph with --decode-model"));
    if (!g.ok()) return g.status();
    loaded.generator = *std::move(g);
  }
  if (args.Has("show-convention") && !json) {
    for (const std::string& line : DescribeDecoderSignature(loaded.generator->decode_signature()))
      std::printf("%s\n", line.c_str());
    for (const CachePath& path : loaded.generator->cache_paths())
      std::printf("cache path      %s: %s\n", path.past.c_str(),
                  path.appended ? "appended in place" : absl::StrCat("ping-pong (", path.why_not, ")").c_str());
  }
  const std::vector<CachePath>& paths = loaded.generator->cache_paths();
  const size_t appended = std::count_if(paths.begin(), paths.end(), [](const CachePath& p) { return p.appended; });
  loaded.cache_path = !options.inplace_cache      ? "copy"
                      : appended == paths.size() ? "append"
                      : appended == 0            ? "ping-pong"
                                                 : "append+ping-pong";
  if (options.inplace_cache && appended < paths.size()) {
    const auto first = std::find_if(paths.begin(), paths.end(), [](const CachePath& p) { return !p.appended; });
    std::fprintf(stderr, "note: %zu of %zu cache tensors are kept in two buffers in turn, not appended in place: %s\n",
                 paths.size() - appended, paths.size(), first->why_not.c_str());
  }
  return loaded;
}

// Untimed runs first: the first run of a session pays one-time costs (kernel
// set-up, thread start) that a long-lived embedder pays once.
absl::Status Warmup(const Args& args, const Generator& generator, const std::vector<std::vector<int64_t>>& prompts,
                    const GenerationOptions& options) {
  ASSIGN_OR_RETURN(const int64_t warmup, args.Int("warmup", 0));
  for (int64_t i = 0; i < warmup; ++i) {
    GenerationOptions short_run = options;
    short_run.max_new_tokens = std::min<int64_t>(options.max_new_tokens, 2);
    RETURN_IF_ERROR(generator.Generate(prompts, short_run).status());
  }
  return absl::OkStatus();
}

nlohmann::json TimingJson(const GenerationResult& result, size_t batch, const std::string& cache_path) {
  return {{"generated_ids", result.generated_ids},
          {"prefill_ms", result.prefill_ms},
          {"token_ms_median", result.token_ms_median},
          {"token_ms_p90", result.token_ms_p90},
          {"tokens_per_s", result.tokens_per_s},
          {"decode_steps", result.step_ms.size()},
          {"batch", batch},
          {"cache", cache_path}};
}

void PrintTimings(const GenerationResult& result, const std::vector<std::vector<int64_t>>& prompts,
                  const std::string& cache_path) {
  size_t longest = 0;
  for (const auto& p : prompts) longest = std::max(longest, p.size());
  std::printf("prefill    %.2f ms (%zu x %zu tokens)\n", result.prefill_ms, prompts.size(), longest);
  std::printf("per token  median %.3f ms, p90 %.3f ms (%zu decode steps, %s cache)\n", result.token_ms_median,
              result.token_ms_p90, result.step_ms.size(), cache_path.c_str());
  std::printf("tokens/s   %.1f\n", result.tokens_per_s);
}

std::string Dump(const nlohmann::json& j) {
  // Bytes that are not valid UTF-8 (a character cut by max-new-tokens) become U+FFFD.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// --prompt: text in, text out through the model's tokenizer.
absl::Status GenerateFromText(const Args& args, const GenerationOptions& options, bool json) {
  const std::string model_path = args.positionals()[0];
  std::string tokenizer_path;
  if (auto given = args.Value("tokenizer")) {
    tokenizer_path = *given;
  } else {
    ASSIGN_OR_RETURN(tokenizer_path, Tokenizer::FindBeside(model_path));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(tokenizer_path));
  const std::vector<std::string> prompts = args.Values("prompt");
  ASSIGN_OR_RETURN(Loaded loaded, LoadGenerator(args, options, json));
  if (args.Has("warmup")) {
    std::vector<std::vector<int64_t>> ids;
    for (const std::string& p : prompts) {
      ASSIGN_OR_RETURN(std::vector<int64_t> one, tokenizer->Encode(p));
      ids.push_back(std::move(one));
    }
    RETURN_IF_ERROR(Warmup(args, *loaded.generator, ids, options));
  }
  const bool stream = !json && prompts.size() == 1 && isatty(STDOUT_FILENO);
  TextCallback on_text;
  if (stream) {
    on_text = [](size_t, const std::string& text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };
  }
  ASSIGN_OR_RETURN(TextGenerationResult result,
                   loaded.generator->GenerateText(*tokenizer, prompts, options, args.Values("stop"), on_text));
  if (stream) std::printf("\n");
  for (const std::string& note : result.tokens.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (json) {
    nlohmann::json out = TimingJson(result.tokens, prompts.size(), loaded.cache_path);
    out["text"] = result.text;
    out["prompt_ids"] = result.prompt_ids;
    std::printf("%s\n", Dump(out).c_str());
    return absl::OkStatus();
  }
  for (size_t r = 0; r < result.text.size(); ++r) {
    if (!stream) std::printf("text %zu     %s\n", r + 1, EscapeControl(result.text[r]).c_str());
    std::printf("ids %zu      %s\n", r + 1, absl::StrJoin(result.tokens.generated_ids[r], " ").c_str());
  }
  PrintTimings(result.tokens, result.prompt_ids, loaded.cache_path);
  return absl::OkStatus();
}

// --prompt-ids: ids in, ids out (and text with --vocab or --tokenizer).
absl::Status GenerateFromIds(const Args& args, const GenerationOptions& options, bool json) {
  std::vector<std::vector<int64_t>> prompts;
  for (const std::string& text : args.Values("prompt-ids")) {
    ASSIGN_OR_RETURN(std::vector<int64_t> ids, ParseIds(text));
    prompts.push_back(std::move(ids));
  }
  if (prompts.empty()) return absl::InvalidArgumentError("give at least one --prompt TEXT or --prompt-ids ID,ID,...");
  std::optional<Detokenizer> vocab;
  std::unique_ptr<Tokenizer> tokenizer;
  if (auto path = args.Value("vocab")) {
    ASSIGN_OR_RETURN(Detokenizer d, Detokenizer::Load(*path));
    vocab = std::move(d);
  }
  if (auto path = args.Value("tokenizer")) {
    ASSIGN_OR_RETURN(tokenizer, Tokenizer::Load(*path));
  }
  ASSIGN_OR_RETURN(Loaded loaded, LoadGenerator(args, options, json));
  // The text of some ids: through the tokenizer, else the --vocab decoder.
  auto decode = [&](const std::vector<int64_t>& ids) -> absl::StatusOr<std::string> {
    if (tokenizer) return tokenizer->Decode(ids, /*skip_special_tokens=*/true);
    return vocab->Decode(ids);
  };
  const bool has_text = vocab.has_value() || tokenizer != nullptr;
  RETURN_IF_ERROR(Warmup(args, *loaded.generator, prompts, options));

  // Streaming: one prompt, to a terminal, not JSON.
  const bool stream = !json && prompts.size() == 1 && isatty(STDOUT_FILENO);
  std::optional<TextStream> text_stream;
  if (tokenizer) text_stream.emplace(*tokenizer);
  TokenCallback on_token;
  if (stream) {
    on_token = [&](const TokenEvent& e) {
      if (e.tokens[0] >= 0) {
        std::string piece = absl::StrCat(e.tokens[0], " ");
        if (text_stream) piece = text_stream->Push(e.tokens[0]).value_or("");
        else if (vocab) piece = vocab->TokenBytes(e.tokens[0]);
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
      return true;
    };
  }
  ASSIGN_OR_RETURN(GenerationResult result, loaded.generator->Generate(prompts, options, on_token));
  if (stream) std::printf("%s\n", text_stream ? text_stream->Finish().c_str() : "");
  for (const std::string& note : result.notes) std::fprintf(stderr, "note: %s\n", note.c_str());

  if (json) {
    nlohmann::json out = TimingJson(result, prompts.size(), loaded.cache_path);
    if (has_text) {
      std::vector<std::string> texts;
      for (const auto& ids : result.generated_ids) {
        ASSIGN_OR_RETURN(std::string text, decode(ids));
        texts.push_back(std::move(text));
      }
      out["text"] = texts;
    }
    std::printf("%s\n", Dump(out).c_str());
    return absl::OkStatus();
  }
  for (size_t r = 0; r < result.generated_ids.size(); ++r) {
    const auto& ids = result.generated_ids[r];
    if (!stream || has_text) std::printf("ids %zu      %s\n", r + 1, absl::StrJoin(ids, " ").c_str());
    if (has_text && !stream) {
      ASSIGN_OR_RETURN(const std::string text, decode(ids));
      std::printf("text %zu     %s\n", r + 1, EscapeControl(text).c_str());
    }
  }
  PrintTimings(result, prompts, loaded.cache_path);
  return absl::OkStatus();
}

absl::Status Generate(const Args& args) {
  if (args.positionals().size() != 1) return absl::InvalidArgumentError("generate needs exactly one MODEL.onnx");
  ASSIGN_OR_RETURN(SessionOptions session_options, SessionOptionsFromArgs(args));
  ASSIGN_OR_RETURN(GenerationOptions options, GenerationOptionsFromArgs(args, session_options.max_tensor_bytes));
  const bool json = args.Has("json");
  if (args.Has("prompt") && args.Has("prompt-ids"))
    return absl::InvalidArgumentError("give prompts either as --prompt TEXT or as --prompt-ids, not both");
  if (args.Has("stop") && !args.Has("prompt"))
    return absl::InvalidArgumentError("--stop needs text prompts (--prompt)");
  if (args.Has("prompt")) {
    if (args.Has("vocab")) return absl::InvalidArgumentError("--prompt decodes with the tokenizer: --vocab is for --prompt-ids");
    return GenerateFromText(args, options, json);
  }
  return GenerateFromIds(args, options, json);
}

}  // namespace

int GenerateCommand(int argc, char** argv) {
  FlagSpec spec{{"decode-model", "prompt-ids", "max-new-tokens", "eos-id", "temperature", "top-k", "top-p", "seed",
                 "vocab", "map", "max-context", "warmup", "prompt", "tokenizer", "stop"},
                {"greedy", "json", "no-inplace-cache", "show-convention"}};
  AddSessionFlags(spec);
  return RunSubcommand(argc, argv, kUsage, spec, Generate);
}

}  // namespace attune::cli
