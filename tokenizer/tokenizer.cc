// attune::Tokenizer: which file, which end-of-sequence ids, and Decode.
#include "attune/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"

namespace attune {
namespace {

namespace fs = std::filesystem;

// Names that end a sequence in the major model families, used when no config names one.
constexpr const char* kEosNames[] = {"</s>",          "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<|eom_id|>",
                                     "<|im_end|>",    "<eos>",         "<end_of_turn>",   "<|end|>",    "[SEP]"};

std::optional<nlohmann::json> ReadJsonFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// From tokenizer_config.json's eos_token and generation_config.json's
// eos_token_id beside the file; else every special token with an EOS name.
std::vector<int64_t> FindEosIds(const Tokenizer& tokenizer, const fs::path& folder) {
  std::vector<int64_t> ids;
  auto add = [&](int64_t id) {
    if (id >= 0 && id < tokenizer.vocab_size() && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  if (auto config = ReadJsonFile(folder / "tokenizer_config.json"); config && config->is_object()) {
    const nlohmann::json eos = config->value("eos_token", nlohmann::json());
    const std::string name = eos.is_string() ? eos.get<std::string>()
                             : eos.is_object() && eos.contains("content") && eos["content"].is_string()
                                 ? eos["content"].get<std::string>()
                                 : "";
    if (auto id = tokenizer.TokenToId(name); !name.empty() && id) add(*id);
  }
  if (auto config = ReadJsonFile(folder / "generation_config.json"); config && config->is_object()) {
    const nlohmann::json eos = config->value("eos_token_id", nlohmann::json());
    if (eos.is_number_integer()) add(eos.get<int64_t>());
    if (eos.is_array())
      for (const auto& e : eos)
        if (e.is_number_integer()) add(e.get<int64_t>());
  }
  if (!ids.empty()) return ids;
  for (const char* name : kEosNames)
    if (auto id = tokenizer.TokenToId(name); id && tokenizer.IsSpecial(*id)) add(*id);
  return ids;
}

}  // namespace

Tokenizer::~Tokenizer() = default;

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(std::string_view json_text) {
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, tok::LoadTokenizerJson(json_text));
  tokenizer->set_eos_ids(FindEosIds(*tokenizer, fs::path()));
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path_text) {
  fs::path path(path_text);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "tokenizer.json", ec)) path /= "tokenizer.json";
    else if (fs::exists(path / "tokenizer.model", ec)) path /= "tokenizer.model";
    else return absl::NotFoundError(absl::StrCat(path_text, ": no tokenizer.json or tokenizer.model in this folder"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path.string(), ": cannot open the tokenizer file"));
  std::unique_ptr<Tokenizer> tokenizer;
  // A SentencePiece model is a protobuf, whose first byte is often '\n' (field 1's tag): its
  // name decides, then the first byte.
  const int first = in.peek();
  const bool json = path.extension() != ".model" &&
                    (first == '{' || first == ' ' || first == '\n' || first == '\t' || first == '\r');
  if (json) {
    std::stringstream text;
    text << in.rdbuf();
    auto loaded = tok::LoadTokenizerJson(text.str());
    if (!loaded.ok()) return Annotate(loaded.status(), path.string());
    tokenizer = *std::move(loaded);
    tokenizer->set_eos_ids(FindEosIds(*tokenizer, path.parent_path()));
  } else {
    std::stringstream bytes;
    bytes << in.rdbuf();
    auto loaded = tok::LoadSentencePiece(bytes.str());
    if (!loaded.ok()) return Annotate(loaded.status(), path.string());
    tokenizer = *std::move(loaded);
    if (tokenizer->eos_ids().empty()) tokenizer->set_eos_ids(FindEosIds(*tokenizer, path.parent_path()));
  }
  return tokenizer;
}

absl::StatusOr<std::string> Tokenizer::FindBeside(const std::string& model_path) {
  const fs::path folder = fs::path(model_path).parent_path();
  std::error_code ec;
  for (const char* name : {"tokenizer.json", "tokenizer.model"})
    if (fs::exists(folder / name, ec)) return (folder / name).string();
  return absl::NotFoundError(absl::StrCat("no tokenizer.json or tokenizer.model beside ", model_path,
                                          ": give one with --tokenizer"));
}

absl::StatusOr<std::string> Tokenizer::Decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  ASSIGN_OR_RETURN(std::string bytes, DecodeBytes(ids, skip_special_tokens));
  return tok::LossyUtf8(bytes);
}

}  // namespace attune
