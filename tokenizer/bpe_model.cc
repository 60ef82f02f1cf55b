// Byte-pair encoding: a piece starts as its characters (or, with byte
// fallback, the <0xNN> tokens of a character the vocabulary lacks) and the
// adjacent pair of lowest merge rank is merged until none is left.
#include <mutex>
#include <queue>
#include <shared_mutex>

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/model.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

struct MergeResult {
  int32_t rank;
  int32_t id;
};

uint64_t PairKey(int32_t a, int32_t b) { return (uint64_t{static_cast<uint32_t>(a)} << 32) | static_cast<uint32_t>(b); }

struct Symbol {
  int32_t id;
  int32_t prev, next;
  bool alive;
};

struct Candidate {
  int32_t rank, pos, id;
  // The queue pops the lowest rank, then the leftmost position.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

// Pieces already encoded, bounded: most text repeats its words.
class PieceCache {
 public:
  bool Find(std::string_view piece, std::vector<int32_t>& ids) const {
    std::shared_lock lock(mutex_);
    auto it = map_.find(Sv(piece));
    if (it == map_.end()) return false;
    ids.insert(ids.end(), it->second.begin(), it->second.end());
    return true;
  }
  void Insert(std::string_view piece, const int32_t* ids, size_t n) {
    std::unique_lock lock(mutex_);
    if (map_.size() < kCapacity) map_.emplace(std::string(piece), std::vector<int32_t>(ids, ids + n));
  }

 private:
  static constexpr size_t kCapacity = 1 << 16;
  mutable std::shared_mutex mutex_;
  absl::flat_hash_map<std::string, std::vector<int32_t>> map_;
};

class BpeModel : public Model {
 public:
  absl::Status Load(const nlohmann::json& j);
  absl::Status Tokenize(std::string_view piece, std::vector<int32_t>& ids) const override;

 private:
  void InitialSymbols(std::string_view piece, std::vector<Symbol>& symbols) const;
  void MergeAll(std::vector<Symbol>& symbols) const;
  absl::Status AddMerge(const std::string& left, const std::string& right, int32_t rank);

  absl::flat_hash_map<uint64_t, MergeResult> merges_;
  std::string prefix_, suffix_;
  int32_t unk_id_ = -1;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  mutable PieceCache cache_;
};

absl::Status BpeModel::AddMerge(const std::string& left, const std::string& right, int32_t rank) {
  auto a = TokenToId(left), b = TokenToId(right);
  if (!a || !b)
    return absl::InvalidArgumentError(
        absl::StrCat("BPE merge ", rank, " (", Quoted(left), " ", Quoted(right), ") names a token not in the vocab"));
  std::string joined = left;
  joined += std::string_view(right).substr(
      !prefix_.empty() && right.compare(0, prefix_.size(), prefix_) == 0 ? prefix_.size() : 0);
  auto id = TokenToId(joined);
  if (!id)
    return absl::InvalidArgumentError(absl::StrCat("BPE merge ", rank, ": ", Quoted(joined), " is not in the vocab"));
  merges_.insert_or_assign(PairKey(*a, *b), MergeResult{rank, *id});  // a repeated pair: the last rank wins
  return absl::OkStatus();
}

absl::Status BpeModel::Load(const nlohmann::json& j) {
  auto vocab = j.find("vocab");
  if (vocab == j.end() || !vocab->is_object()) return absl::InvalidArgumentError("BPE model: \"vocab\" must be an object");
  for (const auto& [token, id] : vocab->items()) {
    if (!id.is_number_integer())
      return absl::InvalidArgumentError(absl::StrCat("BPE model: the id of ", Quoted(token), " is not an integer"));
    RETURN_IF_ERROR(AddToken(token, id.get<int64_t>()));
  }
  prefix_ = OptionalString(j, "continuing_subword_prefix");
  suffix_ = OptionalString(j, "end_of_word_suffix");
  fuse_unk_ = BoolField(j, "fuse_unk", false);
  byte_fallback_ = BoolField(j, "byte_fallback", false);
  ignore_merges_ = BoolField(j, "ignore_merges", false);
  if (const std::string unk = OptionalString(j, "unk_token"); !unk.empty()) {
    auto id = TokenToId(unk);
    if (!id) return absl::InvalidArgumentError(absl::StrCat("BPE model: unk_token ", Quoted(unk), " is not in the vocab"));
    unk_id_ = *id;
  }
  auto merges = j.find("merges");
  if (merges == j.end() || !merges->is_array()) return absl::InvalidArgumentError("BPE model: \"merges\" must be an array");
  merges_.reserve(merges->size());
  int32_t rank = 0;
  for (const auto& m : *merges) {
    if (m.is_string()) {
      const std::string& line = m.get_ref<const std::string&>();
      const size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        return absl::InvalidArgumentError(absl::StrCat("BPE merge ", rank, " ", Quoted(line), " is not two tokens"));
      RETURN_IF_ERROR(AddMerge(line.substr(0, space), line.substr(space + 1), rank));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      RETURN_IF_ERROR(AddMerge(m[0].get<std::string>(), m[1].get<std::string>(), rank));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("BPE merge ", rank, " is neither \"a b\" nor [a, b]"));
    }
    ++rank;
  }
  IndexByteTokens();
  return absl::OkStatus();
}

void BpeModel::InitialSymbols(std::string_view piece, std::vector<Symbol>& symbols) const {
  auto add = [&](int32_t id) { symbols.push_back({id, 0, 0, true}); };
  int32_t pending_unk = -1;  // an unknown run waiting to be written (fused when fuse_unk)
  std::string with_affixes;
  for (size_t i = 0; i < piece.size();) {
    const size_t begin = i;
    i += Utf8Length(static_cast<unsigned char>(piece[i]));
    std::string_view ch = piece.substr(begin, i - begin);
    if ((!prefix_.empty() && begin > 0) || (!suffix_.empty() && i == piece.size())) {
      with_affixes.assign(begin > 0 ? prefix_ : "");
      with_affixes.append(ch);
      if (i == piece.size()) with_affixes += suffix_;
      ch = with_affixes;
    }
    if (auto it = vocab_.find(Sv(ch)); it != vocab_.end()) {
      if (pending_unk >= 0) add(pending_unk), pending_unk = -1;
      add(it->second);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char c : ch) all = all && byte_ids_[c] >= 0;
      if (all) {
        for (unsigned char c : ch) add(byte_ids_[c]);
        continue;
      }
    }
    if (unk_id_ >= 0) {
      if (pending_unk >= 0 && !fuse_unk_) add(pending_unk);
      pending_unk = unk_id_;
    }
  }
  if (pending_unk >= 0) add(pending_unk);
  for (size_t k = 0; k < symbols.size(); ++k) {
    symbols[k].prev = static_cast<int32_t>(k) - 1;
    symbols[k].next = k + 1 < symbols.size() ? static_cast<int32_t>(k) + 1 : -1;
  }
}

void BpeModel::MergeAll(std::vector<Symbol>& symbols) const {
  std::priority_queue<Candidate> queue;
  auto push_pair = [&](int32_t pos) {
    if (pos < 0 || symbols[pos].next < 0) return;
    auto it = merges_.find(PairKey(symbols[pos].id, symbols[symbols[pos].next].id));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.id});
  };
  for (int32_t k = 0; k + 1 < static_cast<int32_t>(symbols.size()); ++k) push_pair(k);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    // The pair may have changed since it was queued: it must still merge into the same token.
    auto it = merges_.find(PairKey(left.id, symbols[left.next].id));
    if (it == merges_.end() || it->second.id != top.id) continue;
    Symbol& right = symbols[left.next];
    left.id = top.id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    push_pair(left.prev);
    push_pair(top.pos);
  }
}

absl::Status BpeModel::Tokenize(std::string_view piece, std::vector<int32_t>& ids) const {
  if (ignore_merges_) {
    if (auto it = vocab_.find(Sv(piece)); it != vocab_.end()) {
      ids.push_back(it->second);
      return absl::OkStatus();
    }
  }
  if (cache_.Find(piece, ids)) return absl::OkStatus();
  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  InitialSymbols(piece, symbols);
  MergeAll(symbols);
  const size_t first = ids.size();
  for (int32_t k = symbols.empty() ? -1 : 0; k >= 0; k = symbols[k].next) ids.push_back(symbols[k].id);
  if (piece.size() < 256) cache_.Insert(piece, ids.data() + first, ids.size() - first);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> MakeBpeModel(const nlohmann::json& j) {
  auto model = std::make_unique<BpeModel>();
  RETURN_IF_ERROR(model->Load(j));
  return model;
}

}  // namespace attune::tok
