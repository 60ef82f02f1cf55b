// WordPiece (BERT): the longest vocabulary prefix first, continuations marked
// with "##"; a word with any unmatched rest is one unknown token.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/model.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

class WordPieceModel : public Model {
 public:
  absl::Status Load(const nlohmann::json& j) {
    auto vocab = j.find("vocab");
    if (vocab == j.end() || !vocab->is_object())
      return absl::InvalidArgumentError("WordPiece model: \"vocab\" must be an object");
    for (const auto& [token, id] : vocab->items()) {
      if (!id.is_number_integer())
        return absl::InvalidArgumentError(absl::StrCat("WordPiece model: the id of ", Quoted(token), " is not an integer"));
      RETURN_IF_ERROR(AddToken(token, id.get<int64_t>()));
    }
    const std::string unk = OptionalString(j, "unk_token", "[UNK]");
    auto id = TokenToId(unk);
    if (!id) return absl::InvalidArgumentError(absl::StrCat("WordPiece model: unk_token ", Quoted(unk), " is not in the vocab"));
    unk_id_ = *id;
    prefix_ = OptionalString(j, "continuing_subword_prefix", "##");
    max_chars_ = IntField(j, "max_input_chars_per_word", 100);
    return absl::OkStatus();
  }

  absl::Status Tokenize(std::string_view piece, std::vector<int32_t>& ids) const override {
    std::vector<size_t> boundaries;  // byte offset of every character, and the end
    for (size_t i = 0; i < piece.size(); i += Utf8Length(static_cast<unsigned char>(piece[i]))) boundaries.push_back(i);
    boundaries.push_back(piece.size());
    if (static_cast<int64_t>(boundaries.size()) - 1 > max_chars_) {
      ids.push_back(unk_id_);
      return absl::OkStatus();
    }
    const size_t first = ids.size();
    std::string candidate;
    for (size_t b = 0; b + 1 < boundaries.size();) {
      int32_t found = -1;
      size_t e = boundaries.size() - 1;
      for (; e > b; --e) {
        candidate.assign(b > 0 ? prefix_ : "");
        candidate.append(piece.substr(boundaries[b], boundaries[e] - boundaries[b]));
        if (auto id = TokenToId(candidate)) {
          found = *id;
          break;
        }
      }
      if (found < 0) {
        ids.resize(first);
        ids.push_back(unk_id_);
        return absl::OkStatus();
      }
      ids.push_back(found);
      b = e;
    }
    return absl::OkStatus();
  }

 private:
  int32_t unk_id_ = -1;
  std::string prefix_;
  int64_t max_chars_ = 100;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> MakeWordPieceModel(const nlohmann::json& j) {
  auto model = std::make_unique<WordPieceModel>();
  RETURN_IF_ERROR(model->Load(j));
  return model;
}

}  // namespace attune::tok
