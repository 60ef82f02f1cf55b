// Unigram: the segmentation of a piece into vocabulary entries with the
// highest total score (Viterbi over a byte trie of the pieces); a character no
// entry covers is unknown, scored below every entry.
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/model.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

// How far below the lowest score an unknown character is put (sentencepiece's kUnkPenalty).
constexpr double kUnkPenalty = 10.0;

class UnigramModel : public Model {
 public:
  /// `sentencepiece` (may be null): by id, the entries the segmentation of a
  /// SentencePiece model may use (the others, control and byte pieces, only
  /// have ids); its path scores are then summed in float, as SentencePiece
  /// does, so that ties resolve as they do there.
  absl::Status Load(const nlohmann::json& j, const std::vector<bool>* sentencepiece);
  absl::Status Tokenize(std::string_view piece, std::vector<int32_t>& ids) const override;

 private:
  struct Best {
    int32_t id = -1;
    double score = 0;
    int64_t starts_at = -1;  // -1: not reached yet
  };
  void AddToTrie(std::string_view token, int32_t id);
  // The byte-trie child of `node` on `byte`, or -1.
  int32_t Child(int32_t node, unsigned char byte) const {
    auto it = edges_.find((uint64_t{static_cast<uint32_t>(node)} << 8) | byte);
    return it == edges_.end() ? -1 : it->second;
  }
  void EmitToken(std::string_view text, int32_t id, std::vector<int32_t>& ids) const;

  std::vector<double> scores_;               // by id
  absl::flat_hash_map<uint64_t, int32_t> edges_;  // (node << 8 | byte) -> node
  std::vector<int32_t> node_token_{-1};      // by node: the token ending there, or -1
  int32_t unk_id_ = -1;
  double unk_score_ = 0;
  bool byte_fallback_ = false, fuse_unk_ = true, float_sums_ = false;
  // SentencePiece keeps path scores in float but adds a piece's score to one
  // in double and compares the sum with the stored float: ties and rounding
  // resolve as there only when done the same way.
  double UnkSum(double till_here) const {
    return float_sums_ ? static_cast<double>(static_cast<float>(unk_score_) + static_cast<float>(till_here))
                       : unk_score_ + till_here;
  }
  double Stored(double score) const { return float_sums_ ? static_cast<double>(static_cast<float>(score)) : score; }
};

void UnigramModel::AddToTrie(std::string_view token, int32_t id) {
  int32_t node = 0;
  for (unsigned char c : token) {
    const uint64_t key = (uint64_t{static_cast<uint32_t>(node)} << 8) | c;
    auto [it, inserted] = edges_.try_emplace(key, static_cast<int32_t>(node_token_.size()));
    if (inserted) node_token_.push_back(-1);
    node = it->second;
  }
  node_token_[node] = id;
}

absl::Status UnigramModel::Load(const nlohmann::json& j, const std::vector<bool>* sentencepiece) {
  const std::vector<bool>* matchable = sentencepiece;
  float_sums_ = sentencepiece != nullptr;
  auto vocab = j.find("vocab");
  if (vocab == j.end() || !vocab->is_array()) return absl::InvalidArgumentError("Unigram model: \"vocab\" must be an array");
  double min_score = std::numeric_limits<double>::infinity();
  for (size_t id = 0; id < vocab->size(); ++id) {
    const auto& entry = (*vocab)[id];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
      return absl::InvalidArgumentError(absl::StrCat("Unigram model: vocab entry ", id, " is not [piece, score]"));
    const std::string token = entry[0].get<std::string>();
    RETURN_IF_ERROR(AddToken(token, static_cast<int64_t>(id)));
    scores_.push_back(entry[1].get<double>());
    min_score = std::min(min_score, scores_.back());
    if (!token.empty() && (matchable == nullptr || (id < matchable->size() && (*matchable)[id])))
      AddToTrie(token, static_cast<int32_t>(id));
  }
  unk_id_ = static_cast<int32_t>(IntField(j, "unk_id", -1));
  if (unk_id_ >= size()) return absl::InvalidArgumentError(absl::StrCat("Unigram model: unk_id ", unk_id_, " is outside the vocab"));
  unk_score_ = (vocab->empty() ? 0.0 : min_score) - kUnkPenalty;
  byte_fallback_ = BoolField(j, "byte_fallback", false);
  IndexByteTokens();
  return absl::OkStatus();
}

void UnigramModel::EmitToken(std::string_view text, int32_t id, std::vector<int32_t>& ids) const {
  if (id >= 0 && id != unk_id_) {
    ids.push_back(id);
    return;
  }
  if (auto known = TokenToId(text)) {
    ids.push_back(*known);
    return;
  }
  if (byte_fallback_) {
    bool all = true;
    for (unsigned char c : text) all = all && byte_ids_[c] >= 0;
    if (all) {
      for (unsigned char c : text) ids.push_back(byte_ids_[c]);
      return;
    }
  }
  ids.push_back(unk_id_);
}

absl::Status UnigramModel::Tokenize(std::string_view piece, std::vector<int32_t>& ids) const {
  const size_t n = piece.size();
  std::vector<Best> best(n + 1);
  best[0].starts_at = 0;
  for (size_t start = 0; start < n;) {
    const double till_here = best[start].score;
    const size_t char_len = Utf8Length(static_cast<unsigned char>(piece[start]));
    bool has_single = false;
    int32_t node = 0;
    for (size_t end = start; end < n;) {
      node = Child(node, static_cast<unsigned char>(piece[end++]));
      if (node < 0) break;
      const int32_t id = node_token_[node];
      if (id < 0) continue;
      const double candidate = scores_[id] + till_here;
      Best& b = best[end];
      if (b.starts_at < 0 || candidate > b.score) b = {id, Stored(candidate), static_cast<int64_t>(start)};
      has_single = has_single || end - start == char_len;
    }
    if (!has_single) {
      if (unk_id_ < 0)
        return absl::InvalidArgumentError("Unigram model: a character is not in the vocab and there is no unk_id");
      const double candidate = UnkSum(till_here);
      Best& b = best[start + char_len];
      if (b.starts_at < 0 || candidate > b.score) b = {unk_id_, Stored(candidate), static_cast<int64_t>(start)};
    }
    start += char_len;
  }
  // Back from the end; consecutive unknown characters become one unknown token.
  struct Span {
    size_t begin, end;
    int32_t id;
  };
  std::vector<Span> spans;
  for (size_t end = n; end > 0;) {
    const Best& b = best[end];
    const size_t begin = static_cast<size_t>(b.starts_at);
    if (fuse_unk_ && b.id == unk_id_ && !spans.empty() && spans.back().id == unk_id_)
      spans.back().begin = begin;
    else
      spans.push_back({begin, end, b.id});
    end = begin;
  }
  for (auto s = spans.rbegin(); s != spans.rend(); ++s) EmitToken(piece.substr(s->begin, s->end - s->begin), s->id, ids);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> MakeUnigramModel(const nlohmann::json& j, const std::vector<bool>* sentencepiece) {
  auto model = std::make_unique<UnigramModel>();
  RETURN_IF_ERROR(model->Load(j, sentencepiece));
  return model;
}

}  // namespace attune::tok
