#include "tokenizer/decoder.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/pattern.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

// Every token's code points mapped back through GPT-2's byte alphabet; a token
// with a code point outside it (an added token) is kept as it is.
class ByteLevelDecoder : public Decoder {
 public:
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      const size_t mark = bytes.size();
      bool all = true;
      for (size_t i = 0; i < token.size() && all;) {
        const int b = ByteLevelByte(NextCodePoint(token, i));
        if (b < 0) all = false;
        else bytes.push_back(static_cast<char>(b));
      }
      if (!all) bytes.resize(mark), bytes += token;
    }
    tokens.assign(1, std::move(bytes));
    return absl::OkStatus();
  }
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first) : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    ASSIGN_OR_RETURN(Pattern mark, Pattern::Literal(replacement_));
    for (size_t i = 0; i < tokens.size(); ++i) {
      ASSIGN_OR_RETURN(tokens[i], mark.ReplaceAll(tokens[i], " "));
      if (i == 0 && strip_first_ && !tokens[i].empty() && tokens[i][0] == ' ') tokens[i].erase(0, 1);
    }
    return absl::OkStatus();
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

// "<0xNN>" tokens become the byte NN; runs of them are joined.
class ByteFallbackDecoder : public Decoder {
 public:
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    bool in_run = false;
    for (std::string& token : tokens) {
      const int byte = ParseByteToken(token);
      if (byte >= 0) {
        bytes.push_back(static_cast<char>(byte));
        in_run = true;
        continue;
      }
      if (in_run) out.push_back(std::move(bytes)), bytes.clear(), in_run = false;
      out.push_back(std::move(token));
    }
    if (in_run) out.push_back(std::move(bytes));
    tokens.swap(out);
    return absl::OkStatus();
  }

 private:
  static int ParseByteToken(const std::string& t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
    int value = 0;
    for (int k = 3; k < 5; ++k) {
      const char c = t[k];
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  }
};

class FuseDecoder : public Decoder {
 public:
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, std::move(all));
    return absl::OkStatus();
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, int64_t start, int64_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    if (content_.empty()) return absl::OkStatus();
    const size_t n = content_.size();
    for (std::string& t : tokens) {
      size_t begin = 0, end = t.size();
      for (int64_t k = 0; k < start_ && begin + n <= end && t.compare(begin, n, content_) == 0; ++k) begin += n;
      for (int64_t k = 0; k < stop_ && end >= begin + n && t.compare(end - n, n, content_) == 0; ++k) end -= n;
      t = t.substr(begin, end - begin);
    }
    return absl::OkStatus();
  }

 private:
  std::string content_;
  int64_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      ASSIGN_OR_RETURN(t, pattern_.ReplaceAll(t, content_));
    }
    return absl::OkStatus();
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// BERT's: continuation pieces lose their prefix, the others get a space before them.
class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i > 0 && t.compare(0, prefix_.size(), prefix_) == 0)
        t.erase(0, prefix_.size());
      else if (i > 0)
        t.insert(0, " ");
      if (cleanup_) Cleanup(t);
    }
    return absl::OkStatus();
  }

 private:
  // transformers' clean_up_tokenization: no space before punctuation and contractions.
  static void Cleanup(std::string& t) {
    static const char* const kPairs[][2] = {{" .", "."},   {" ?", "?"},     {" !", "!"},   {" ,", ","},   {" ' ", "'"},
                                            {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
    for (const auto& pair : kPairs) {
      const std::string from = pair[0], to = pair[1];
      for (size_t at = t.find(from); at != std::string::npos; at = t.find(from, at + to.size())) t.replace(at, from.size(), to);
    }
  }
  std::string prefix_;
  bool cleanup_;
};

class BpeSuffixDecoder : public Decoder {
 public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    ASSIGN_OR_RETURN(Pattern suffix, Pattern::Literal(suffix_));
    for (size_t i = 0; i < tokens.size(); ++i) {
      ASSIGN_OR_RETURN(tokens[i], suffix.ReplaceAll(tokens[i], i + 1 == tokens.size() ? "" : " "));
    }
    return absl::OkStatus();
  }

 private:
  std::string suffix_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts) : parts_(std::move(parts)) {}
  absl::Status Decode(std::vector<std::string>& tokens) const override {
    for (const auto& part : parts_) RETURN_IF_ERROR(part->Decode(tokens));
    return absl::OkStatus();
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

absl::StatusOr<std::unique_ptr<Decoder>> MakeMetaspaceDecoder(const nlohmann::json& j) {
  bool strip_first = BoolField(j, "add_prefix_space", true);
  const std::string scheme = OptionalString(j, "prepend_scheme");
  if (!scheme.empty()) strip_first = scheme != "never";
  return std::make_unique<MetaspaceDecoder>(OptionalString(j, "replacement", "\xE2\x96\x81"), strip_first);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Decoder>> MakeDecoder(const nlohmann::json& j) {
  ASSIGN_OR_RETURN(const std::string type, TypeOf(j, "decoder"));
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") return MakeMetaspaceDecoder(j);
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip")
    return std::make_unique<StripDecoder>(OptionalString(j, "content", " "), IntField(j, "start", 0), IntField(j, "stop", 0));
  if (type == "Replace") {
    ASSIGN_OR_RETURN(Pattern pattern, Pattern::FromJson(j.value("pattern", nlohmann::json()), "decoder Replace"));
    ASSIGN_OR_RETURN(std::string content, StringField(j, "content", "decoder Replace"));
    return std::make_unique<ReplaceDecoder>(std::move(pattern), std::move(content));
  }
  if (type == "WordPiece")
    return std::make_unique<WordPieceDecoder>(OptionalString(j, "prefix", "##"), BoolField(j, "cleanup", true));
  if (type == "BPEDecoder") return std::make_unique<BpeSuffixDecoder>(OptionalString(j, "suffix", "</w>"));
  if (type == "Sequence") {
    if (!j.contains("decoders") || !j["decoders"].is_array())
      return absl::InvalidArgumentError("decoder Sequence: \"decoders\" must be an array");
    std::vector<std::unique_ptr<Decoder>> parts;
    for (const auto& part : j["decoders"]) {
      ASSIGN_OR_RETURN(auto d, MakeDecoder(part));
      parts.push_back(std::move(d));
    }
    return std::make_unique<SequenceDecoder>(std::move(parts));
  }
  return absl::UnimplementedError(absl::StrCat("unsupported decoder type ", Quoted(type), ""));
}

}  // namespace attune::tok
