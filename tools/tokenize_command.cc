// attune tokenize: text to token ids, or ids back to text, with a model's tokenizer.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "attune/tokenizer.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tools/command_common.h"
#include "tools/commands.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune tokenize --tokenizer FILE (--text TEXT | --file F) [--json] [--no-special]\n"
    "       attune tokenize --tokenizer FILE --decode ID,ID,... [--json] [--skip-special]\n"
    "\n"
    "Encodes text into token ids, or decodes ids into text, with a Hugging Face tokenizer.json\n"
    "(BPE, byte-level or with byte fallback; Unigram; WordPiece) or a SentencePiece tokenizer.model.\n"
    "\n"
    "  --tokenizer FILE    tokenizer.json, tokenizer.model, or a folder holding one\n"
    "  --text TEXT         the text to encode (UTF-8)\n"
    "  --file F            encode the contents of F (UTF-8)\n"
    "  --decode IDS        comma-separated ids to decode\n"
    "  --no-special        do not add the post-processor's special tokens (BOS/EOS) when encoding\n"
    "  --skip-special      leave special tokens out of the decoded text\n"
    "  --json              one JSON object: {\"ids\": [...], \"count\": N} or {\"text\": \"...\"}\n"
    "  --time N            encode the text N times (one thread) and print one JSON object with the\n"
    "                      encoding throughput (MB/s), the decode time per token of the whole ids and\n"
    "                      of streamed decoding (one id at a time, as generation does), instead of the ids\n"
    "\n"
    "Without --json, encoding prints the ids on one line, separated by spaces, and decoding prints\n"
    "the text as it is.\n";

absl::StatusOr<std::string> ReadText(const Args& args) {
  if (auto text = args.Value("text")) return *text;
  const std::string path = *args.Value("file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the text file"));
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// --time N: what encoding and decoding this text costs on one thread.
absl::Status TimeTokenizer(const Tokenizer& tokenizer, const std::string& text, int64_t repeats) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); };
  // The first encode meets every word for the first time; the repeats find them in the word cache.
  auto start = Clock::now();
  ASSIGN_OR_RETURN(const std::vector<int64_t> ids, tokenizer.Encode(text, false));
  const double cold_s = seconds(start);
  start = Clock::now();
  for (int64_t i = 0; i < repeats; ++i) RETURN_IF_ERROR(tokenizer.Encode(text, false).status());
  const double encode_s = seconds(start) / repeats;
  start = Clock::now();
  for (int64_t i = 0; i < repeats; ++i) RETURN_IF_ERROR(tokenizer.Decode(ids).status());
  const double decode_s = seconds(start) / repeats;
  start = Clock::now();
  size_t streamed = 0;
  TextStream stream(tokenizer, false);
  for (const int64_t id : ids) {
    ASSIGN_OR_RETURN(const std::string piece, stream.Push(id));
    streamed += piece.size();
  }
  streamed += stream.Finish().size();
  const double stream_s = seconds(start);
  const double n = static_cast<double>(std::max<size_t>(ids.size(), 1));
  std::printf("%s\n", nlohmann::json({{"bytes", text.size()},
                                      {"tokens", ids.size()},
                                      {"encode_mb_per_s", text.size() / encode_s / 1e6},
                                      {"encode_first_mb_per_s", text.size() / cold_s / 1e6},
                                      {"decode_us_per_token", decode_s / n * 1e6},
                                      {"stream_decode_us_per_token", stream_s / n * 1e6},
                                      {"streamed_bytes", streamed}})
                          .dump()
                          .c_str());
  return absl::OkStatus();
}

absl::Status Tokenize(const Args& args) {
  if (!args.positionals().empty())
    return absl::InvalidArgumentError(absl::StrCat("tokenize takes no positional argument, got ",
                                                   QuoteName(args.positionals()[0])));
  auto path = args.Value("tokenizer");
  if (!path) return absl::InvalidArgumentError("give the tokenizer with --tokenizer FILE");
  const int modes = args.Has("text") + args.Has("file") + args.Has("decode");
  if (modes != 1) return absl::InvalidArgumentError("give exactly one of --text, --file and --decode");
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(*path));
  const bool json = args.Has("json");
  if (auto ids_text = args.Value("decode")) {
    ASSIGN_OR_RETURN(const std::vector<int64_t> ids, ParseIdList("decode", *ids_text));
    ASSIGN_OR_RETURN(const std::string text, tokenizer->Decode(ids, args.Has("skip-special")));
    if (json) std::printf("%s\n", nlohmann::json({{"text", text}}).dump().c_str());
    else std::printf("%s\n", text.c_str());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const std::string text, ReadText(args));
  if (args.Has("time")) {
    ASSIGN_OR_RETURN(const int64_t repeats, args.Int("time", 1));
    if (repeats < 1) return absl::InvalidArgumentError("--time needs a count of at least 1");
    return TimeTokenizer(*tokenizer, text, repeats);
  }
  ASSIGN_OR_RETURN(const std::vector<int64_t> ids, tokenizer->Encode(text, !args.Has("no-special")));
  if (json) std::printf("%s\n", nlohmann::json({{"ids", ids}, {"count", ids.size()}}).dump().c_str());
  else std::printf("%s\n", absl::StrJoin(ids, " ").c_str());
  return absl::OkStatus();
}

}  // namespace

int TokenizeCommand(int argc, char** argv) {
  const FlagSpec spec{{"tokenizer", "text", "file", "decode", "time"}, {"json", "no-special", "skip-special"}};
  return RunSubcommand(argc, argv, kUsage, spec, Tokenize);
}

}  // namespace attune::cli
