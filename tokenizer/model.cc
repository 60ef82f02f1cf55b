#include "tokenizer/model.h"
#include "core/common/strings.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"

namespace attune::tok {

// A vocabulary this large is a corrupt file, not a tokenizer (the largest in use have ~300k entries).
constexpr int64_t kMaxTokenId = int64_t{1} << 26;

std::optional<int32_t> Model::TokenToId(std::string_view token) const {
  auto it = vocab_.find(Sv(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* Model::IdToToken(int32_t id) const {
  if (id < 0 || id >= size() || !present_[id]) return nullptr;
  return &tokens_[id];
}

absl::Status Model::AddToken(std::string token, int64_t id) {
  if (id < 0 || id >= kMaxTokenId)
    return absl::InvalidArgumentError(absl::StrCat("model vocab: token id ", id, " is out of range"));
  if (id >= size()) {
    tokens_.resize(id + 1);
    present_.resize(id + 1, false);
  }
  if (present_[id]) return absl::InvalidArgumentError(absl::StrCat("model vocab: id ", id, " appears twice"));
  present_[id] = true;
  vocab_.emplace(token, static_cast<int32_t>(id));
  tokens_[id] = std::move(token);
  return absl::OkStatus();
}

void Model::IndexByteTokens() {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = TokenToId(name).value_or(-1);
  }
}

absl::StatusOr<std::unique_ptr<Model>> MakeModel(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("\"model\" must be an object");
  std::string type;
  if (auto it = j.find("type"); it != j.end() && it->is_string()) {
    type = it->get<std::string>();
  } else if (j.contains("merges")) {
    type = "BPE";
  } else if (j.contains("vocab") && j["vocab"].is_array()) {
    type = "Unigram";
  } else if (j.contains("vocab")) {
    type = "WordPiece";
  }
  if (type == "BPE") return MakeBpeModel(j);
  if (type == "Unigram") return MakeUnigramModel(j);
  if (type == "WordPiece") return MakeWordPieceModel(j);
  return absl::UnimplementedError(absl::StrCat("unsupported model type ", Quoted(type), ""));
}

}  // namespace attune::tok
