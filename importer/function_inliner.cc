#include "importer/function_inliner.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "google/protobuf/unknown_field_set.h"

namespace attune::importer {
namespace {

// Deeper nesting than this is taken to be recursion.
constexpr int kMaxDepth = 32;
// FunctionProto.attribute_proto (attributes with defaults) arrived after ONNX 1.12,
// so this build's generated code keeps it among the unknown fields.
constexpr int kFunctionAttributeProtoField = 11;

std::string Normalized(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }
std::string Key(const std::string& domain, const std::string& name) {
  return absl::StrCat(Normalized(domain), "\n", name);
}

struct Function {
  const onnx::FunctionProto* proto;
  absl::flat_hash_map<std::string, onnx::AttributeProto> defaults;
};

absl::flat_hash_map<std::string, onnx::AttributeProto> AttributeDefaults(const onnx::FunctionProto& fn) {
  absl::flat_hash_map<std::string, onnx::AttributeProto> defaults;
  const google::protobuf::UnknownFieldSet& unknown = fn.GetReflection()->GetUnknownFields(fn);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField& field = unknown.field(i);
    if (field.number() != kFunctionAttributeProtoField ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::AttributeProto attribute;
    if (attribute.ParseFromString(field.length_delimited()) && !attribute.name().empty())
      defaults[attribute.name()] = attribute;
  }
  return defaults;
}

class Inliner {
 public:
  explicit Inliner(onnx::ModelProto* model) : model_(*model) {}

  absl::Status Run() {
    for (const auto& fn : model_.functions()) {
      auto [it, inserted] = functions_.emplace(Key(fn.domain(), fn.name()), Function{&fn, AttributeDefaults(fn)});
      if (!inserted)
        return absl::UnimplementedError(absl::StrCat("function ", QuoteName(fn.name()), " of domain ", QuoteName(fn.domain()),
                                                     " is defined more than once (overloads are not supported)"));
    }
    bool any_call = false;
    for (const auto& node : model_.graph().node()) any_call |= IsCall(node);
    if (!any_call) return absl::OkStatus();

    CollectTakenNames();
    std::vector<onnx::NodeProto> expanded;
    for (const auto& node : model_.graph().node()) RETURN_IF_ERROR(Expand(node, 0, &expanded));
    auto* nodes = model_.mutable_graph()->mutable_node();
    nodes->Clear();
    for (auto& node : expanded) *nodes->Add() = std::move(node);
    return absl::OkStatus();
  }

 private:
  bool IsCall(const onnx::NodeProto& node) const { return functions_.contains(Key(node.domain(), node.op_type())); }

  void CollectTakenNames() {
    const onnx::GraphProto& g = model_.graph();
    for (const auto& v : g.input()) taken_.insert(v.name());
    for (const auto& v : g.output()) taken_.insert(v.name());
    for (const auto& t : g.initializer()) taken_.insert(t.name());
    for (const auto& n : g.node()) {
      taken_.insert(n.name());
      for (const auto& s : n.input()) taken_.insert(s);
      for (const auto& s : n.output()) taken_.insert(s);
    }
  }

  absl::Status MergeOpsets(const onnx::FunctionProto& fn) {
    for (const auto& fn_opset : fn.opset_import()) {
      const std::string domain = Normalized(fn_opset.domain());
      bool found = false;
      for (const auto& opset : model_.opset_import()) {
        if (Normalized(opset.domain()) != domain) continue;
        found = true;
        if (opset.version() != fn_opset.version())
          return absl::UnimplementedError(absl::StrCat("function ", QuoteName(fn.name()), " imports opset ",
                                                       fn_opset.version(), " of domain ", QuoteName(domain),
                                                       " but the model imports ", opset.version()));
      }
      if (!found) *model_.add_opset_import() = fn_opset;
    }
    return absl::OkStatus();
  }

  // A prefix under which none of the function's inner names exists yet.
  std::string FreshPrefix(const onnx::NodeProto& call, const onnx::FunctionProto& fn) {
    const std::string base = call.name().empty() ? fn.name() : call.name();
    while (true) {
      const std::string prefix = absl::StrCat(base, "/", fn.name(), "_", counter_++, "/");
      bool clash = false;
      for (const auto& n : fn.node()) {
        clash |= taken_.contains(prefix + n.name()) || taken_.contains(prefix + n.op_type());
        for (const auto& s : n.output()) clash |= taken_.contains(prefix + s);
      }
      if (!clash) return prefix;
    }
  }

  absl::Status Expand(const onnx::NodeProto& node, int depth, std::vector<onnx::NodeProto>* out) {
    auto it = functions_.find(Key(node.domain(), node.op_type()));
    if (it == functions_.end()) {
      out->push_back(node);
      return absl::OkStatus();
    }
    const Function& function = it->second;
    const onnx::FunctionProto& fn = *function.proto;
    if (depth >= kMaxDepth)
      return absl::InvalidArgumentError(absl::StrCat("function ", QuoteName(fn.name()), " is nested more than ",
                                                     kMaxDepth, " deep (node ", QuoteName(node.name()),
                                                     "); is it recursive?"));
    if (node.input_size() > fn.input_size() || node.output_size() > fn.output_size())
      return absl::InvalidArgumentError(absl::StrCat(
          "node ", QuoteName(node.name()), " calls function ", QuoteName(fn.name()), " with ", node.input_size(),
          " inputs and ", node.output_size(), " outputs; it takes ", fn.input_size(), " and ", fn.output_size()));
    RETURN_IF_ERROR(MergeOpsets(fn));

    const std::string prefix = FreshPrefix(node, fn);
    absl::flat_hash_map<std::string, std::string> rename;
    for (int i = 0; i < fn.input_size(); ++i) rename[fn.input(i)] = i < node.input_size() ? node.input(i) : "";
    for (int i = 0; i < fn.output_size(); ++i) {
      const bool bound = i < node.output_size() && !node.output(i).empty();
      rename[fn.output(i)] = bound ? node.output(i) : prefix + fn.output(i);
    }
    auto map_name = [&](const std::string& name) -> std::string {
      if (name.empty()) return name;
      auto found = rename.find(name);
      return found != rename.end() ? found->second : prefix + name;
    };

    for (const onnx::NodeProto& inner : fn.node()) {
      onnx::NodeProto copy = inner;
      copy.set_name(prefix + (inner.name().empty() ? inner.op_type() : inner.name()));
      for (std::string& s : *copy.mutable_input()) s = map_name(s);
      for (std::string& s : *copy.mutable_output()) s = map_name(s);
      for (const std::string& s : copy.output()) taken_.insert(s);
      taken_.insert(copy.name());
      copy.clear_attribute();
      for (const onnx::AttributeProto& a : inner.attribute()) {
        if (a.ref_attr_name().empty()) {
          *copy.add_attribute() = a;
          continue;
        }
        const onnx::AttributeProto* source = nullptr;
        for (const auto& given : node.attribute())
          if (given.name() == a.ref_attr_name()) source = &given;
        if (source == nullptr) {
          auto def = function.defaults.find(a.ref_attr_name());
          if (def != function.defaults.end()) source = &def->second;
        }
        if (source == nullptr) continue;  // not given: the op's own default applies
        onnx::AttributeProto* resolved = copy.add_attribute();
        *resolved = *source;
        resolved->set_name(a.name());
        resolved->clear_ref_attr_name();
      }
      RETURN_IF_ERROR(Expand(copy, depth + 1, out));
    }
    return absl::OkStatus();
  }

  onnx::ModelProto& model_;
  absl::flat_hash_map<std::string, Function> functions_;
  absl::flat_hash_set<std::string> taken_;
  int64_t counter_ = 0;
};

}  // namespace

absl::Status InlineModelFunctions(onnx::ModelProto* model) {
  if (model->functions_size() == 0) return absl::OkStatus();
  return Inliner(model).Run();
}

}  // namespace attune::importer
