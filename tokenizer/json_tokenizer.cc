#include "tokenizer/json_tokenizer.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/escape.h"
#include "nlohmann/json.hpp"
#include "tokenizer/added_vocabulary.h"
#include "tokenizer/decoder.h"
#include "tokenizer/model.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

class JsonTokenizer : public Tokenizer {
 public:
  absl::Status Load(const nlohmann::json& j);
  absl::StatusOr<std::vector<int64_t>> Encode(std::string_view text, bool add_special_tokens) const override;
  absl::StatusOr<std::string> DecodeBytes(const std::vector<int64_t>& ids, bool skip_special_tokens) const override;
  int64_t vocab_size() const override { return vocab_size_; }
  std::optional<int64_t> TokenToId(std::string_view token) const override {
    if (auto id = added_.TokenToId(token)) return *id;
    if (auto id = model_->TokenToId(token)) return *id;
    return std::nullopt;
  }
  bool IsSpecial(int64_t id) const override {
    const AddedToken* t = id >= 0 && id < vocab_size_ ? added_.ById(static_cast<int32_t>(id)) : nullptr;
    return t != nullptr && t->special;
  }
  const AddedVocabulary& added() const { return added_; }

 private:
  // Loads one optional component: null or absent gives null.
  template <typename T, typename Make>
  absl::Status Component(const nlohmann::json& j, const char* key, std::unique_ptr<T>& out, Make make) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absl::OkStatus();
    ASSIGN_OR_RETURN(out, make(*it));
    return absl::OkStatus();
  }

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  AddedVocabulary added_;
  int64_t vocab_size_ = 0;
};

absl::Status JsonTokenizer::Load(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("tokenizer.json must hold an object");
  if (!j.contains("model")) return absl::InvalidArgumentError("tokenizer.json has no \"model\"");
  ASSIGN_OR_RETURN(model_, MakeModel(j["model"]));
  RETURN_IF_ERROR(Component(j, "normalizer", normalizer_, MakeNormalizer));
  RETURN_IF_ERROR(Component(j, "pre_tokenizer", pre_tokenizer_, MakePreTokenizer));
  RETURN_IF_ERROR(Component(j, "post_processor", post_processor_, MakePostProcessor));
  RETURN_IF_ERROR(Component(j, "decoder", decoder_, MakeDecoder));
  RETURN_IF_ERROR(added_.Load(j.value("added_tokens", nlohmann::json()), normalizer_.get()));
  vocab_size_ = model_->size();
  for (const AddedToken& t : added_.tokens()) vocab_size_ = std::max<int64_t>(vocab_size_, t.id + 1);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> JsonTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat("the text is not valid UTF-8 at byte ", bad, " (0x",
                                                   absl::Hex(static_cast<unsigned char>(text[bad]), absl::kZeroPad2), ")"));
  std::vector<TextPart> parts{{std::string(text), -1, true}};
  added_.Split(parts, /*normalized=*/false);
  if (normalizer_) {
    for (TextPart& part : parts)
      if (part.id < 0) RETURN_IF_ERROR(normalizer_->Normalize(part.text));
  }
  added_.Split(parts, /*normalized=*/true);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::vector<Piece> pieces;
  for (TextPart& part : parts) {
    if (part.id >= 0) {
      ids.push_back(part.id);
      continue;
    }
    pieces.clear();
    pieces.push_back({std::move(part.text), part.at_start});
    if (pre_tokenizer_) RETURN_IF_ERROR(pre_tokenizer_->PreTokenize(pieces));
    for (const Piece& piece : pieces)
      if (!piece.text.empty()) RETURN_IF_ERROR(model_->Tokenize(piece.text, ids));
  }
  if (add_special_tokens && post_processor_) post_processor_->Process(ids);
  return std::vector<int64_t>(ids.begin(), ids.end());
}

absl::StatusOr<std::string> JsonTokenizer::DecodeBytes(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int64_t id : ids) {
    const std::string* token = nullptr;
    const AddedToken* added = id >= 0 && id < vocab_size_ ? added_.ById(static_cast<int32_t>(id)) : nullptr;
    if (added != nullptr) {
      if (skip_special_tokens && added->special) continue;
      token = &added->content;
    } else if (id >= 0 && id < vocab_size_) {
      token = model_->IdToToken(static_cast<int32_t>(id));
    }
    if (token == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is outside the tokenizer's vocabulary (", vocab_size_, " ids)"));
    tokens.push_back(*token);
  }
  if (!decoder_) {
    // Without a decoder the tokens are joined with spaces, as the reference does.
    std::string text;
    for (size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
    return text;
  }
  RETURN_IF_ERROR(decoder_->Decode(tokens));
  std::string text;
  for (const std::string& t : tokens) text += t;
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerJson(std::string_view json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("tokenizer.json is not valid JSON");
  auto tokenizer = std::make_unique<JsonTokenizer>();
  try {
    RETURN_IF_ERROR(tokenizer->Load(j));
  } catch (const nlohmann::json::exception& e) {
    // A field of an unexpected JSON type that no check above caught.
    return absl::InvalidArgumentError(absl::StrCat("tokenizer.json: ", EscapeControl(e.what())));
  }
  return tokenizer;
}

}  // namespace attune::tok
