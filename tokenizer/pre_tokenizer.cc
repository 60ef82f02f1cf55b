#include "tokenizer/pre_tokenizer.h"
#include "core/common/strings.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

// GPT-2's expression, which ByteLevel applies when use_regex is set.
constexpr char kGpt2Regex[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Applies `split` to every piece, collecting the parts.
template <typename Split>
absl::Status ForEachPiece(std::vector<Piece>& pieces, Split split) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  for (const Piece& piece : pieces) RETURN_IF_ERROR(split(piece, out));
  pieces.swap(out);
  return absl::OkStatus();
}

// One match per character for which `pred` holds.
MatchRanges CharMatches(std::string_view text, const std::function<bool(char32_t)>& pred) {
  MatchRanges matches;
  for (size_t i = 0; i < text.size();) {
    const size_t begin = i;
    if (pred(NextCodePoint(text, i))) matches.emplace_back(begin, i);
  }
  return matches;
}

class SplitPre : public PreTokenizer {
 public:
  SplitPre(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  absl::Status PreTokenize(std::vector<Piece>& pieces) const override {
    return ForEachPiece(pieces, [&](const Piece& piece, std::vector<Piece>& out) -> absl::Status {
      ASSIGN_OR_RETURN(MatchRanges matches, pattern_.FindAll(piece.text));
      SplitAtMatches(piece, matches, invert_, behavior_, out);
      return absl::OkStatus();
    });
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class CharSplit : public PreTokenizer {
 public:
  CharSplit(std::function<bool(char32_t)> pred, SplitBehavior behavior) : pred_(std::move(pred)), behavior_(behavior) {}
  absl::Status PreTokenize(std::vector<Piece>& pieces) const override {
    return ForEachPiece(pieces, [&](const Piece& piece, std::vector<Piece>& out) {
      SplitAtMatches(piece, CharMatches(piece.text, pred_), false, behavior_, out);
      return absl::OkStatus();
    });
  }

 private:
  std::function<bool(char32_t)> pred_;
  SplitBehavior behavior_;
};

class ByteLevelPre : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, std::optional<Pattern> regex)
      : add_prefix_space_(add_prefix_space), regex_(std::move(regex)) {}
  absl::Status PreTokenize(std::vector<Piece>& pieces) const override {
    RETURN_IF_ERROR(ForEachPiece(pieces, [&](const Piece& piece, std::vector<Piece>& out) -> absl::Status {
      Piece p = piece;
      if (add_prefix_space_ && (p.text.empty() || p.text[0] != ' ')) p.text.insert(0, " ");
      if (!regex_) {
        out.push_back(std::move(p));
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(MatchRanges matches, regex_->FindAll(p.text));
      SplitAtMatches(p, matches, false, SplitBehavior::kIsolated, out);
      return absl::OkStatus();
    }));
    for (Piece& piece : pieces) {
      std::string mapped;
      mapped.reserve(piece.text.size() * 2);
      for (unsigned char c : piece.text) mapped += ByteLevelChar(c);
      piece.text.swap(mapped);
    }
    return absl::OkStatus();
  }

 private:
  bool add_prefix_space_;
  std::optional<Pattern> regex_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

class MetaspacePre : public PreTokenizer {
 public:
  MetaspacePre(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  absl::Status PreTokenize(std::vector<Piece>& pieces) const override {
    ASSIGN_OR_RETURN(Pattern space, Pattern::Literal(" "));
    ASSIGN_OR_RETURN(Pattern mark, Pattern::Literal(replacement_));
    return ForEachPiece(pieces, [&](const Piece& piece, std::vector<Piece>& out) -> absl::Status {
      Piece p = piece;
      ASSIGN_OR_RETURN(p.text, space.ReplaceAll(p.text, replacement_));
      const bool starts = p.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && p.at_start)))
        p.text.insert(0, replacement_);
      if (!split_) {
        out.push_back(std::move(p));
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(MatchRanges matches, mark.FindAll(p.text));
      SplitAtMatches(p, matches, false, SplitBehavior::kMergedWithNext, out);
      return absl::OkStatus();
    });
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePre : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  absl::Status PreTokenize(std::vector<Piece>& pieces) const override {
    for (const auto& part : parts_) RETURN_IF_ERROR(part->PreTokenize(pieces));
    return absl::OkStatus();
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

absl::StatusOr<SplitBehavior> BehaviorOf(const nlohmann::json& j, std::string_view where,
                                         SplitBehavior fallback = SplitBehavior::kIsolated) {
  const std::string name = OptionalString(j, "behavior");
  if (name.empty()) return fallback;
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  return absl::UnimplementedError(absl::StrCat(Sv(where), ": unsupported behavior ", Quoted(name), ""));
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeMetaspace(const nlohmann::json& j) {
  std::string replacement = OptionalString(j, "replacement", "\xE2\x96\x81");
  if (replacement.empty()) return absl::InvalidArgumentError("pre_tokenizer Metaspace: empty replacement");
  PrependScheme scheme = BoolField(j, "add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
  const std::string name = OptionalString(j, "prepend_scheme");
  if (name == "always") scheme = PrependScheme::kAlways;
  else if (name == "first") scheme = PrependScheme::kFirst;
  else if (name == "never") scheme = PrependScheme::kNever;
  else if (!name.empty())
    return absl::UnimplementedError(absl::StrCat("pre_tokenizer Metaspace: unsupported prepend_scheme ", Quoted(name), ""));
  return std::make_unique<MetaspacePre>(std::move(replacement), scheme, BoolField(j, "split", true));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const nlohmann::json& j) {
  ASSIGN_OR_RETURN(const std::string type, TypeOf(j, "pre_tokenizer"));
  if (type == "ByteLevel") {
    std::optional<Pattern> regex;
    if (BoolField(j, "use_regex", true)) {
      ASSIGN_OR_RETURN(Pattern p, Pattern::Regex(kGpt2Regex));
      regex = std::move(p);
    }
    return std::make_unique<ByteLevelPre>(BoolField(j, "add_prefix_space", true), std::move(regex));
  }
  if (type == "Split") {
    ASSIGN_OR_RETURN(Pattern pattern, Pattern::FromJson(j.value("pattern", nlohmann::json()), "pre_tokenizer Split"));
    ASSIGN_OR_RETURN(SplitBehavior behavior, BehaviorOf(j, "pre_tokenizer Split"));
    return std::make_unique<SplitPre>(std::move(pattern), behavior, BoolField(j, "invert", false));
  }
  if (type == "Metaspace") return MakeMetaspace(j);
  if (type == "Whitespace") {
    ASSIGN_OR_RETURN(Pattern words, Pattern::Regex(R"(\w+|[^\w\s]+)"));
    return std::make_unique<SplitPre>(std::move(words), SplitBehavior::kRemoved, true);
  }
  if (type == "WhitespaceSplit") return std::make_unique<CharSplit>(IsWhitespace, SplitBehavior::kRemoved);
  if (type == "Digits") {
    const bool individual = BoolField(j, "individual_digits", false);
    return std::make_unique<CharSplit>(IsNumeric, individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
  }
  if (type == "Punctuation") {
    ASSIGN_OR_RETURN(SplitBehavior behavior, BehaviorOf(j, "pre_tokenizer Punctuation"));
    return std::make_unique<CharSplit>(IsPunctuation, behavior);
  }
  if (type == "CharDelimiterSplit") {
    ASSIGN_OR_RETURN(const std::string delimiter, StringField(j, "delimiter", "pre_tokenizer CharDelimiterSplit"));
    size_t pos = 0;
    const char32_t cp = delimiter.empty() ? 0 : NextCodePoint(delimiter, pos);
    return std::make_unique<CharSplit>([cp](char32_t c) { return c == cp; }, SplitBehavior::kRemoved);
  }
  if (type == "BertPreTokenizer") {
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    parts.push_back(std::make_unique<CharSplit>(IsWhitespace, SplitBehavior::kRemoved));
    parts.push_back(std::make_unique<CharSplit>(IsPunctuation, SplitBehavior::kIsolated));
    return std::make_unique<SequencePre>(std::move(parts));
  }
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
      return absl::InvalidArgumentError("pre_tokenizer Sequence: \"pretokenizers\" must be an array");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (const auto& part : j["pretokenizers"]) {
      ASSIGN_OR_RETURN(auto p, MakePreTokenizer(part));
      parts.push_back(std::move(p));
    }
    return std::make_unique<SequencePre>(std::move(parts));
  }
  return absl::UnimplementedError(absl::StrCat("unsupported pre_tokenizer type ", Quoted(type), ""));
}

}  // namespace attune::tok
