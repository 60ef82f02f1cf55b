#include "tokenizer/sentencepiece_tokenizer.h"

#include "absl/strings/str_cat.h"
#include "tokenizer/sentencepiece_bridge.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  absl::Status Load(const std::string& path) {
    const std::string error = processor_.Load(path);
    if (!error.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": not a SentencePiece model (", error, ")"));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> Encode(std::string_view text, bool add_special_tokens) const override {
    if (const size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos)
      return absl::InvalidArgumentError(absl::StrCat("the text is not valid UTF-8 at byte ", bad));
    std::vector<int> ids;
    if (std::string error = processor_.Encode(text, ids); !error.empty())
      return absl::InvalidArgumentError(absl::StrCat("SentencePiece: ", error));
    std::vector<int64_t> out;
    out.reserve(ids.size() + 1);
    if (add_special_tokens && processor_.bos_id() >= 0) out.push_back(processor_.bos_id());
    out.insert(out.end(), ids.begin(), ids.end());
    return out;
  }
  absl::StatusOr<std::string> DecodeBytes(const std::vector<int64_t>& ids, bool skip_special_tokens) const override {
    std::vector<int> pieces;
    pieces.reserve(ids.size());
    for (const int64_t id : ids) {
      if (id < 0 || id >= vocab_size())
        return absl::InvalidArgumentError(
            absl::StrCat("token id ", id, " is outside the tokenizer's vocabulary (", vocab_size(), " ids)"));
      if (skip_special_tokens && IsSpecial(id)) continue;
      pieces.push_back(static_cast<int>(id));
    }
    std::string text;
    if (std::string error = processor_.Decode(pieces, text); !error.empty())
      return absl::InvalidArgumentError(absl::StrCat("SentencePiece: ", error));
    return text;
  }
  int64_t vocab_size() const override { return processor_.size(); }
  std::optional<int64_t> TokenToId(std::string_view token) const override {
    const int id = processor_.PieceToId(token);
    if (id < 0) return std::nullopt;
    return id;
  }
  bool IsSpecial(int64_t id) const override {
    return id >= 0 && id < vocab_size() && processor_.IsControlOrUnknown(static_cast<int>(id));
  }
  int eos_id() const { return processor_.eos_id(); }

 private:
  SentencePieceBridge processor_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePiece(const std::string& path) {
  auto tokenizer = std::make_unique<SentencePieceTokenizer>();
  if (auto status = tokenizer->Load(path); !status.ok()) return status;
  if (tokenizer->eos_id() >= 0) tokenizer->set_eos_ids({tokenizer->eos_id()});
  return tokenizer;
}

}  // namespace attune::tok
