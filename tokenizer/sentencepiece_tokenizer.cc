// A tokenizer.model as SentencePiece runs it: its normalizer, then the Unigram
// or BPE model (the tokenizer.json models, given the pieces) over the whole
// normalized text, cut only where no piece can span; user-defined pieces are
// never split; unknown runs become one <unk> or, with byte fallback, <0xNN>
// pieces. Decoding turns "▁" back into spaces and drops the dummy prefix.
#include "tokenizer/sentencepiece_tokenizer.h"

#include <algorithm>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "nlohmann/json.hpp"
#include "tokenizer/added_vocabulary.h"
#include "tokenizer/model.h"
#include "tokenizer/sentencepiece_model.h"
#include "tokenizer/sentencepiece_normalizer.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

using PieceType = SentencePieceModel::PieceType;
constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

bool IsMergeable(PieceType t) { return t == PieceType::kNormal || t == PieceType::kUserDefined; }

// SentencePiece's BPE merges any two adjacent symbols whose concatenation is a
// piece, the highest-scoring first (leftmost on ties): each way of cutting a
// piece into two pieces is a merge, ranked by the piece's score.
nlohmann::json BpeMerges(const SentencePieceModel& m) {
  absl::flat_hash_map<absl::string_view, size_t> ids;
  std::vector<float> scores;
  for (size_t id = 0; id < m.pieces.size(); ++id)
    if (IsMergeable(m.pieces[id].type)) ids.emplace(Sv(m.pieces[id].text), id), scores.push_back(m.pieces[id].score);
  std::sort(scores.begin(), scores.end(), std::greater<float>());
  scores.erase(std::unique(scores.begin(), scores.end()), scores.end());
  std::vector<std::pair<size_t, nlohmann::json>> ranked;  // (rank, [left, right])
  for (const auto& piece : m.pieces) {
    if (piece.type != PieceType::kNormal) continue;
    const std::string_view text = piece.text;
    const size_t rank = std::lower_bound(scores.begin(), scores.end(), piece.score, std::greater<float>()) - scores.begin();
    for (size_t cut = Utf8Length(static_cast<unsigned char>(text[0])); cut < text.size();
         cut += Utf8Length(static_cast<unsigned char>(text[cut]))) {
      if (ids.contains(Sv(text.substr(0, cut))) && ids.contains(Sv(text.substr(cut))))
        ranked.emplace_back(rank, nlohmann::json::array({text.substr(0, cut), text.substr(cut)}));
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::json merges = nlohmann::json::array();
  for (auto& [rank, pair] : ranked) merges.push_back(std::move(pair));
  return merges;
}

class SentencePieceTokenizer : public Tokenizer {
 public:
  absl::Status Load(SentencePieceModel model);
  absl::StatusOr<std::vector<int64_t>> Encode(std::string_view text, bool add_special_tokens) const override;
  absl::StatusOr<std::string> DecodeBytes(const std::vector<int64_t>& ids, bool skip_special_tokens) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(spec_.pieces.size()); }
  std::optional<int64_t> TokenToId(std::string_view token) const override {
    auto it = ids_.find(Sv(token));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  bool IsSpecial(int64_t id) const override {
    if (id < 0 || id >= vocab_size()) return false;
    const PieceType t = spec_.pieces[id].type;
    return t == PieceType::kControl || t == PieceType::kUnknown;
  }
  int32_t eos_id() const { return spec_.eos_id; }

 private:
  absl::Status TokenizeNormalized(std::string_view text, std::vector<int32_t>& ids) const;
  std::string DecodePiece(int64_t id, bool& at_start) const;

  SentencePieceModel spec_;
  std::optional<SentencePieceNormalizer> normalizer_;
  std::unique_ptr<Model> model_;
  AddedVocabulary user_defined_;
  absl::flat_hash_map<std::string, int32_t> ids_;
  bool cut_at_words_ = false;
};

absl::Status SentencePieceTokenizer::Load(SentencePieceModel model) {
  spec_ = std::move(model);
  if (spec_.model_type != SentencePieceModel::ModelType::kUnigram && spec_.model_type != SentencePieceModel::ModelType::kBpe)
    return absl::UnimplementedError(absl::StrCat("SentencePiece model_type ", static_cast<int>(spec_.model_type),
                                                 " (WORD or CHAR) is not supported; UNIGRAM and BPE are"));
  ASSIGN_OR_RETURN(SentencePieceNormalizer normalizer, SentencePieceNormalizer::Make(spec_));
  normalizer_ = std::move(normalizer);
  nlohmann::json user = nlohmann::json::array();
  std::vector<bool> matchable(spec_.pieces.size());
  for (size_t id = 0; id < spec_.pieces.size(); ++id) {
    const auto& piece = spec_.pieces[id];
    if (!ids_.emplace(piece.text, static_cast<int32_t>(id)).second)
      return absl::InvalidArgumentError(absl::StrCat("not a SentencePiece model: piece ", id, " repeats an earlier one"));
    matchable[id] = piece.type == PieceType::kNormal;
    if (piece.type == PieceType::kUserDefined)
      user.push_back({{"id", id}, {"content", piece.text}, {"special", false}, {"normalized", true}});
  }
  RETURN_IF_ERROR(user_defined_.Load(user, nullptr));
  nlohmann::json j = {{"unk_id", spec_.unk_id}, {"byte_fallback", spec_.byte_fallback}};
  if (spec_.model_type == SentencePieceModel::ModelType::kUnigram) {
    nlohmann::json vocab = nlohmann::json::array();
    for (const auto& piece : spec_.pieces) vocab.push_back(nlohmann::json::array({piece.text, piece.score}));
    j["vocab"] = std::move(vocab);
    ASSIGN_OR_RETURN(model_, MakeUnigramModel(j, &matchable));
  } else {
    nlohmann::json vocab = nlohmann::json::object();
    for (size_t id = 0; id < spec_.pieces.size(); ++id) vocab[spec_.pieces[id].text] = id;
    j["vocab"] = std::move(vocab);
    j["merges"] = BpeMerges(spec_);
    j["unk_token"] = spec_.pieces[spec_.unk_id].text;
    j["fuse_unk"] = true;
    ASSIGN_OR_RETURN(model_, MakeBpeModel(j));
  }
  // Trained with split_by_whitespace, no piece holds "▁" after another character.
  cut_at_words_ = spec_.split_by_whitespace && !spec_.treat_whitespace_as_suffix && spec_.escape_whitespaces;
  return absl::OkStatus();
}

absl::Status SentencePieceTokenizer::TokenizeNormalized(std::string_view text, std::vector<int32_t>& ids) const {
  size_t begin = 0;
  if (cut_at_words_) {
    const size_t w = kSpaceSymbol.size();
    for (size_t pos = text.find(kSpaceSymbol, 1); pos != std::string_view::npos; pos = text.find(kSpaceSymbol, pos + w)) {
      if (pos >= w && text.substr(pos - w, w) == kSpaceSymbol) continue;  // inside a run of "▁"
      RETURN_IF_ERROR(model_->Tokenize(text.substr(begin, pos - begin), ids));
      begin = pos;
    }
  }
  if (begin < text.size()) RETURN_IF_ERROR(model_->Tokenize(text.substr(begin), ids));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SentencePieceTokenizer::Encode(std::string_view text, bool add_special_tokens) const {
  if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat("the text is not valid UTF-8 at byte ", bad, " (0x",
                                                   absl::Hex(static_cast<unsigned char>(text[bad]), absl::kZeroPad2), ")"));
  std::vector<TextPart> parts(1);
  ASSIGN_OR_RETURN(parts[0].text, normalizer_->Normalize(text));
  user_defined_.Split(parts, /*normalized=*/true);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  for (const TextPart& part : parts) {
    if (part.id >= 0) ids.push_back(part.id);
    else if (!part.text.empty()) RETURN_IF_ERROR(TokenizeNormalized(part.text, ids));
  }
  std::vector<int64_t> out;
  out.reserve(ids.size() + 1);
  if (add_special_tokens && spec_.bos_id >= 0) out.push_back(spec_.bos_id);
  out.insert(out.end(), ids.begin(), ids.end());
  return out;
}

// One piece's text; `at_start` holds while nothing visible was written, when
// the dummy prefix's "▁" is dropped (SentencePiece's Decode).
std::string SentencePieceTokenizer::DecodePiece(int64_t id, bool& at_start) const {
  const auto& piece = spec_.pieces[id];
  if (piece.type == PieceType::kControl) return "";
  if (piece.type == PieceType::kUnknown) {
    at_start = false;
    return spec_.unk_surface;
  }
  std::string_view text = piece.text;
  // SentencePiece 0.1.97 drops the "▁" of the first piece only.
  if (at_start && spec_.add_dummy_prefix && text.substr(0, kSpaceSymbol.size()) == kSpaceSymbol) {
    text.remove_prefix(kSpaceSymbol.size());
    at_start = false;
  }
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    if (text.substr(pos, kSpaceSymbol.size()) == kSpaceSymbol) {
      out.push_back(' ');
      pos += kSpaceSymbol.size();
    } else {
      out.push_back(text[pos++]);
    }
  }
  if (!out.empty()) at_start = false;
  return out;
}

absl::StatusOr<std::string> SentencePieceTokenizer::DecodeBytes(const std::vector<int64_t>& ids,
                                                                bool skip_special_tokens) const {
  std::string text;
  bool at_start = true;
  for (const int64_t id : ids) {
    if (id < 0 || id >= vocab_size())
      return absl::InvalidArgumentError(
          absl::StrCat("token id ", id, " is outside the tokenizer's vocabulary (", vocab_size(), " ids)"));
    if (skip_special_tokens && IsSpecial(id)) continue;
    const auto& piece = spec_.pieces[id];
    unsigned int byte = 0;
    if (piece.type == PieceType::kByte && piece.text.size() == 6 && std::sscanf(piece.text.c_str(), "<0x%2X>", &byte) == 1) {
      text.push_back(static_cast<char>(byte));
      at_start = false;
      continue;
    }
    text += DecodePiece(id, at_start);
  }
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePiece(std::string_view bytes) {
  ASSIGN_OR_RETURN(SentencePieceModel model, ParseSentencePieceModel(bytes));
  auto tokenizer = std::make_unique<SentencePieceTokenizer>();
  RETURN_IF_ERROR(tokenizer->Load(std::move(model)));
  if (tokenizer->eos_id() >= 0) tokenizer->set_eos_ids({tokenizer->eos_id()});
  return tokenizer;
}

}  // namespace attune::tok
