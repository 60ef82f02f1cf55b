#include "tokenizer/post_processor.h"
#include "core/common/strings.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"

namespace attune::tok {
namespace {

// The single-sequence template: fixed ids before and after the sequence.
class Wrap : public PostProcessor {
 public:
  Wrap(std::vector<int32_t> before, std::vector<int32_t> after) : before_(std::move(before)), after_(std::move(after)) {}
  void Process(std::vector<int32_t>& ids) const override {
    ids.insert(ids.begin(), before_.begin(), before_.end());
    ids.insert(ids.end(), after_.begin(), after_.end());
  }

 private:
  std::vector<int32_t> before_, after_;
};

class SequenceProcessor : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  void Process(std::vector<int32_t>& ids) const override {
    for (const auto& p : parts_) p->Process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

class Nothing : public PostProcessor {
 public:
  void Process(std::vector<int32_t>&) const override {}
};

absl::StatusOr<int32_t> IdOf(const nlohmann::json& pair, std::string_view where) {
  // ["[CLS]", 101]
  if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number_integer())
    return absl::InvalidArgumentError(absl::StrCat("post_processor ", Sv(where), ": expected [token, id]"));
  return pair[1].get<int32_t>();
}

absl::StatusOr<std::unique_ptr<PostProcessor>> MakeTemplate(const nlohmann::json& j) {
  auto single = j.find("single");
  if (single == j.end() || !single->is_array())
    return absl::InvalidArgumentError("post_processor TemplateProcessing: \"single\" must be an array");
  const nlohmann::json special = j.value("special_tokens", nlohmann::json::object());
  std::vector<int32_t> before, after;
  bool seen_sequence = false;
  for (const auto& piece : *single) {
    if (piece.contains("Sequence")) {
      seen_sequence = true;
      continue;
    }
    auto token = piece.find("SpecialToken");
    if (token == piece.end() || !token->contains("id") || !(*token)["id"].is_string())
      return absl::InvalidArgumentError("post_processor TemplateProcessing: a piece is neither Sequence nor SpecialToken");
    const std::string name = (*token)["id"].get<std::string>();
    auto entry = special.find(name);
    if (entry == special.end() || !entry->contains("ids") || !(*entry)["ids"].is_array())
      return absl::InvalidArgumentError(
          absl::StrCat("post_processor TemplateProcessing: special token ", Quoted(name), " has no ids"));
    for (const auto& id : (*entry)["ids"]) {
      if (!id.is_number_integer())
        return absl::InvalidArgumentError(absl::StrCat("post_processor TemplateProcessing: ", Quoted(name), " has a bad id"));
      (seen_sequence ? after : before).push_back(id.get<int32_t>());
    }
  }
  return std::make_unique<Wrap>(std::move(before), std::move(after));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostProcessor>> MakePostProcessor(const nlohmann::json& j) {
  ASSIGN_OR_RETURN(const std::string type, TypeOf(j, "post_processor"));
  if (type == "TemplateProcessing") return MakeTemplate(j);
  if (type == "ByteLevel") return std::make_unique<Nothing>();
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    ASSIGN_OR_RETURN(const int32_t cls, IdOf(j.value("cls", nlohmann::json()), type));
    ASSIGN_OR_RETURN(const int32_t sep, IdOf(j.value("sep", nlohmann::json()), type));
    return std::make_unique<Wrap>(std::vector<int32_t>{cls}, std::vector<int32_t>{sep});
  }
  if (type == "Sequence") {
    if (!j.contains("processors") || !j["processors"].is_array())
      return absl::InvalidArgumentError("post_processor Sequence: \"processors\" must be an array");
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (const auto& part : j["processors"]) {
      ASSIGN_OR_RETURN(auto p, MakePostProcessor(part));
      parts.push_back(std::move(p));
    }
    return std::make_unique<SequenceProcessor>(std::move(parts));
  }
  return absl::UnimplementedError(absl::StrCat("unsupported post_processor type ", Quoted(type), ""));
}

}  // namespace attune::tok
