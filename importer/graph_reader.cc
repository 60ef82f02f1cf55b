#include "importer/graph_reader.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "core/validate/validate_graph.h"
#include "importer/constant_attribute.h"
#include "importer/proto_attribute.h"
#include "importer/proto_type.h"
#include "importer/subgraph_scope.h"
#include "importer/file_weights.h"

namespace attune::importer {
namespace {

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

std::string NormalizedDomain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

// What a subgraph's reader knows of the graphs around it.
struct EnclosingScope {
  const Graph* graph = nullptr;     // the graph of the node that owns the subgraph
  std::vector<std::string> names;   // the node's outer-scope reads, in order (its last inputs)
  int depth = 0;                    // 1 for a subgraph of the model's graph
  std::string where;                // "subgraph 'body' of node Loop 'l'"
};

class GraphReader {
 public:
  GraphReader(onnx::GraphProto* proto, const TensorSource& source, Graph* graph, const LeftOutRawData* left_out,
              const EnclosingScope* scope = nullptr)
      : proto_(*proto), source_(source), graph_(*graph), left_out_(left_out), scope_(scope) {}

  absl::Status Read() {
    graph_.graph_name = proto_.name();
    CollectUsedNames();
    NameNodes();
    RETURN_IF_ERROR(ReadInitializers());
    RETURN_IF_ERROR(ReadInputs());
    RETURN_IF_ERROR(DeclareNodeOutputs());
    RETURN_IF_ERROR(AddOuterScopeInputs());
    ReadValueInfo();
    RETURN_IF_ERROR(ReadOutputs());
    for (int i = 0; i < proto_.node_size(); ++i) RETURN_IF_ERROR(ReadNode(i));
    RETURN_IF_ERROR(graph_.Verify());
    return ValidateGraph(graph_);
  }

 private:
  // Names read by some node or graph output: only those initializers must be loadable.
  void CollectUsedNames() {
    for (const auto& node : proto_.node())
      for (const std::string& in : node.input()) used_.insert(in);
    for (const auto& out : proto_.output()) used_.insert(out.name());
  }

  // Unnamed nodes get "<op_type>_<n>", avoiding every name already in the model.
  void NameNodes() {
    absl::flat_hash_set<std::string> taken;
    for (const auto& node : proto_.node()) {
      taken.insert(node.name());
      for (const std::string& out : node.output()) taken.insert(out);
    }
    for (const auto& in : proto_.input()) taken.insert(in.name());
    for (const auto& init : proto_.initializer()) taken.insert(init.name());
    absl::flat_hash_map<std::string, int> next;
    for (const auto& node : proto_.node()) {
      std::string name = node.name();
      while (name.empty() || (name != node.name() && taken.contains(name)))
        name = absl::StrCat(node.op_type(), "_", next[node.op_type()]++);
      taken.insert(name);
      node_names_.push_back(name);
    }
  }

  std::string DescribeNode(int i) const {
    std::string text = absl::StrCat("node ", EscapeControl(proto_.node(i).op_type()), " ", QuoteName(node_names_[i]));
    if (scope_ != nullptr) absl::StrAppend(&text, " in ", scope_->where);
    return text;
  }

  // A subgraph's last inputs stand for the outer values its node passes in
  // (Graph::outer_scope_inputs). A name this subgraph defines itself is read
  // by a sibling subgraph only: its slot gets a fresh name and no reader.
  absl::Status AddOuterScopeInputs() {
    if (scope_ == nullptr) return absl::OkStatus();
    for (const std::string& name : scope_->names) {
      const Value* outer = scope_->graph->FindValue(name);
      const ElementType type = outer != nullptr ? outer->type() : ElementType::kUndefined;
      if (producer_of_.contains(name)) {
        graph_.AddInput(graph_.AddValue(graph_.UniqueName(absl::StrCat(name, "_outer")), type));
        continue;
      }
      RETURN_IF_ERROR(ClaimProducer(name, absl::StrCat("outer-scope value ", QuoteName(name))));
      graph_.AddInput(graph_.AddValue(name, type));
    }
    graph_.outer_scope_inputs = static_cast<int>(scope_->names.size());
    return absl::OkStatus();
  }

  // Reads the node's graph attributes into subgraphs; returns the outer values
  // they read, which become the node's last inputs.
  absl::StatusOr<std::vector<Value*>> ReadSubgraphs(int i, std::vector<std::shared_ptr<const Graph>>& graphs,
                                                   std::vector<std::string>& attribute_names) {
    onnx::NodeProto& node = *proto_.mutable_node(i);
    const int depth = scope_ != nullptr ? scope_->depth + 1 : 1;
    EnclosingScope inner{&graph_, {}, depth, ""};
    for (const auto& a : node.attribute()) {
      if (AttributeTypeOf(a) != onnx::AttributeProto::GRAPH) continue;
      const std::string where = absl::StrCat("subgraph ", QuoteName(a.name()), " of ", DescribeNode(i));
      ASSIGN_OR_RETURN(std::vector<OuterRead> reads, OuterReads(a.g(), where, depth, DescribeNode(i)));
      for (const OuterRead& r : reads) {
        if (std::find(inner.names.begin(), inner.names.end(), r.name) != inner.names.end()) continue;
        if (graph_.FindValue(r.name) == nullptr)
          return Invalid(absl::StrCat(r.reader, " reads ", QuoteName(r.name),
                                      ", which no node, graph input or initializer in scope produces"));
        inner.names.push_back(r.name);
      }
    }
    for (auto& a : *node.mutable_attribute()) {
      if (AttributeTypeOf(a) != onnx::AttributeProto::GRAPH) continue;
      inner.where = absl::StrCat("subgraph ", QuoteName(a.name()), " of ", DescribeNode(i));
      auto sub = std::make_shared<Graph>();
      for (const auto& [domain, version] : graph_.opsets()) sub->SetOpset(domain, version);
      sub->ir_version = graph_.ir_version;
      RETURN_IF_ERROR(GraphReader(a.mutable_g(), source_, sub.get(), nullptr, &inner).Read());
      graphs.push_back(std::move(sub));
      attribute_names.push_back(a.name());
    }
    std::vector<Value*> outer;
    for (const std::string& name : inner.names) outer.push_back(graph_.FindValue(name));
    return outer;
  }

  absl::Status ClaimProducer(const std::string& name, const std::string& producer) {
    auto [it, inserted] = producer_of_.emplace(name, producer);
    if (!inserted)
      return Invalid(
          absl::StrCat("value ", QuoteName(name), " is produced twice: by ", it->second, " and by ", producer));
    return absl::OkStatus();
  }

  absl::Status ReadInitializers() {
    if (left_out_ != nullptr && left_out_->spans.size() != static_cast<size_t>(proto_.initializer_size()))
      return absl::InternalError(absl::StrCat("the model file lists ", left_out_->spans.size(),
                                              " initializers but its parse holds ", proto_.initializer_size()));
    const FileWeightPolicy in_file(proto_, source_.weights_compressed_at_load);
    for (int i = 0; i < proto_.initializer_size(); ++i) {
      onnx::TensorProto& init = *proto_.mutable_initializer(i);
      if (init.name().empty()) return Invalid(absl::StrCat("initializer #", i, " has no name"));
      const std::string what = absl::StrCat("initializer ", QuoteName(init.name()));
      if (producer_of_.contains(init.name())) return Invalid(absl::StrCat(what, " is defined twice"));
      // A tensor Attune cannot hold is only an error when something reads it.
      if (!IsSupportedElementType(init.data_type()) && !used_.contains(init.name())) {
        skipped_.insert(init.name());
        continue;
      }
      RETURN_IF_ERROR(ClaimProducer(init.name(), what));
      std::optional<MappedRawData> mapped;
      if (left_out_ != nullptr && left_out_->spans[i]) mapped = MappedRawData{left_out_->file, *left_out_->spans[i]};
      if (mapped) {
        ASSIGN_OR_RETURN(std::shared_ptr<const FileConstant> in_place, in_file.Defer(init, *mapped));
        if (in_place != nullptr) {
          // Released from the start: the graph keeps its type and shape, the file its bytes.
          Value* v = graph_.AddConstant(init.name(), Tensor());
          v->set_type(in_place->type());
          v->set_shape(ShapeFromDims(in_place->shape()));
          graph_.ReleaseConstant(v, std::move(in_place));
          continue;
        }
      }
      ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(init, what, source_, mapped ? &*mapped : nullptr));
      std::string().swap(*init.mutable_raw_data());  // the copy in `tensor` is the one we keep
      graph_.AddConstant(init.name(), std::move(tensor));
    }
    for (const auto& sparse : proto_.sparse_initializer()) {
      const std::string& name = sparse.values().name();
      if (used_.contains(name))
        return absl::UnimplementedError(absl::StrCat("sparse initializer ", QuoteName(name), " is not supported"));
    }
    return absl::OkStatus();
  }

  // Checks a graph input's or output's declared type; returns its element type.
  absl::StatusOr<ElementType> InterfaceType(const std::string& role, const std::string& name, const TypeInfo& info) {
    const std::string in_scope = scope_ != nullptr ? absl::StrCat(" of ", scope_->where) : std::string();
    if (!info.is_tensor && info.kind != "no type")
      return absl::UnimplementedError(absl::StrCat(role, " ", QuoteName(name), in_scope, " is ",
                                                   info.kind == "optional" ? "an " : "a ", info.kind,
                                                   ", which Attune does not support"));
    if (info.elem_type == 0) return ElementType::kUndefined;
    auto type = ElementTypeFromOnnx(info.elem_type, absl::StrCat(role, " ", QuoteName(name), in_scope));
    if (!type.ok()) return type.status();
    return *type;
  }

  absl::Status ReadInputs() {
    absl::flat_hash_set<std::string> seen;
    for (const auto& input : proto_.input()) {
      const std::string& name = input.name();
      if (name.empty()) return Invalid("a graph input has no name");
      if (!seen.insert(name).second)
        return Invalid(absl::StrCat("graph input ", QuoteName(name), " is declared twice"));
      // IR >= 4: an input that is also an initializer is a constant with a default; treat it as a constant.
      if (skipped_.contains(name) || graph_.FindValue(name) != nullptr) continue;
      const TypeInfo info = ReadType(input.type());
      ASSIGN_OR_RETURN(ElementType type, InterfaceType("graph input", name, info));
      RETURN_IF_ERROR(ClaimProducer(name, absl::StrCat("graph input ", QuoteName(name))));
      // A subgraph's inputs keep their types only: a loop-carried value may
      // change shape from one iteration to the next.
      graph_.AddInput(graph_.AddValue(name, type, scope_ == nullptr ? info.shape : std::nullopt));
    }
    return absl::OkStatus();
  }

  absl::Status DeclareNodeOutputs() {
    for (int i = 0; i < proto_.node_size(); ++i) {
      const onnx::NodeProto& node = proto_.node(i);
      if (node.op_type().empty())
        return Invalid(absl::StrCat("node #", i, " (", QuoteName(node.name()), ") has no op_type"));
      for (const std::string& out : node.output()) {
        if (out.empty()) continue;  // an omitted optional output
        RETURN_IF_ERROR(ClaimProducer(out, DescribeNode(i)));
        graph_.AddValue(out);
      }
    }
    return absl::OkStatus();
  }

  // value_info types and shapes of intermediate values; non-tensor or unreadable entries are hints only.
  void ReadValueInfo() {
    for (const auto& info_proto : proto_.value_info()) {
      Value* value = graph_.FindValue(info_proto.name());
      if (value == nullptr || value->is_constant() || value->is_graph_input()) continue;
      if (value->type() != ElementType::kUndefined || value->shape()) continue;
      const TypeInfo info = ReadType(info_proto.type());
      if (!info.is_tensor) continue;
      if (IsSupportedElementType(info.elem_type)) value->set_type(static_cast<ElementType>(info.elem_type));
      value->set_shape(info.shape);
    }
  }

  absl::Status ReadOutputs() {
    for (const auto& output : proto_.output()) {
      const std::string& name = output.name();
      if (name.empty()) return Invalid("a graph output has no name");
      Value* value = graph_.FindValue(name);
      if (value == nullptr)
        return Invalid(
            absl::StrCat("graph output ", QuoteName(name), " is not produced by any node, graph input or initializer"));
      const TypeInfo info = ReadType(output.type());
      ASSIGN_OR_RETURN(ElementType type, InterfaceType("graph output", name, info));
      if (!value->is_constant() && !value->is_graph_input()) {
        if (type != ElementType::kUndefined) value->set_type(type);
        if (info.shape) value->set_shape(info.shape);
      }
      graph_.AddOutput(value);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Attributes> ReadAttributes(int i) {
    const onnx::NodeProto& node = proto_.node(i);
    Attributes attributes;
    for (const auto& a : node.attribute()) {
      const auto type = AttributeTypeOf(a);
      if (type == onnx::AttributeProto::GRAPH) continue;  // ReadSubgraphs
      if (type == onnx::AttributeProto::GRAPHS)
        return absl::UnimplementedError(absl::StrCat(DescribeNode(i), ": attribute ", QuoteName(a.name()),
                                                     " is a list of graphs, which Attune does not support"));
      if (a.name().empty()) return Invalid(absl::StrCat(DescribeNode(i), " has an attribute without a name"));
      if (attributes.Has(a.name()))
        return Invalid(absl::StrCat(DescribeNode(i), ": attribute ", QuoteName(a.name()), " is given twice"));
      if (!a.ref_attr_name().empty())
        return Invalid(absl::StrCat(DescribeNode(i), ": attribute ", QuoteName(a.name()),
                                    " refers to function attribute ", QuoteName(a.ref_attr_name()), " outside a function"));
      ASSIGN_OR_RETURN(AttributeValue value, AttributeFromProto(a, node.op_type(), node_names_[i], source_));
      attributes.Set(a.name(), std::move(value));
    }
    return attributes;
  }

  absl::Status ReadNode(int i) {
    const onnx::NodeProto& node = proto_.node(i);
    const std::string domain = NormalizedDomain(node.domain());
    if (graph_.OpsetFor(domain) <= 0) {
      if (domain.empty())
        return Invalid(absl::StrCat(DescribeNode(i), " is in the default ONNX domain, but the model's opset_import ",
                                    "has no version for it"));
      return Invalid(absl::StrCat(DescribeNode(i), " uses domain ", QuoteName(domain),
                                  ", which the model's opset_import does not list"));
    }
    std::vector<Value*> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      Value* value = graph_.FindValue(name);
      if (value == nullptr) {
        const char* why = skipped_.contains(name) ? " (an initializer of an unsupported type)" : "";
        return Invalid(absl::StrCat(DescribeNode(i), " reads ", QuoteName(name),
                                    ", which no node, graph input or initializer produces", why));
      }
      inputs.push_back(value);
    }
    std::vector<Value*> outputs;
    for (const std::string& name : node.output()) outputs.push_back(name.empty() ? nullptr : graph_.FindValue(name));
    ASSIGN_OR_RETURN(Attributes attributes, ReadAttributes(i));
    // Only the control-flow ops bind the outer values their subgraphs read
    // (as their last inputs); any other op would read them as its own.
    const bool control_flow = domain.empty() && (node.op_type() == "If" || node.op_type() == "Loop" ||
                                                 node.op_type() == "Scan");
    for (const auto& a : node.attribute())
      if (!control_flow && AttributeTypeOf(a) == onnx::AttributeProto::GRAPH)
        return absl::UnimplementedError(absl::StrCat(DescribeNode(i), ": attribute ", QuoteName(a.name()),
                                                     " is a graph, which Attune runs only for If, Loop and Scan"));
    std::vector<std::shared_ptr<const Graph>> subgraphs;
    std::vector<std::string> subgraph_names;
    ASSIGN_OR_RETURN(std::vector<Value*> outer, ReadSubgraphs(i, subgraphs, subgraph_names));
    inputs.insert(inputs.end(), outer.begin(), outer.end());

    if (domain.empty() && node.op_type() == "Constant") {
      ASSIGN_OR_RETURN(Tensor value, ConstantValueFromAttributes(attributes, DescribeNode(i)));
      if (!outputs.empty() && outputs[0] != nullptr) {
        outputs[0]->set_type(value.type());
        outputs[0]->set_shape(ShapeFromDims(value.shape()));
      }
    }
    Node* added = graph_.AddNode(node.op_type(), domain, node_names_[i], std::move(inputs), std::move(outputs),
                                 std::move(attributes));
    for (size_t g = 0; g < subgraphs.size(); ++g) added->AddSubgraph(subgraph_names[g], std::move(subgraphs[g]));
    return absl::OkStatus();
  }

  onnx::GraphProto& proto_;
  const TensorSource& source_;
  Graph& graph_;
  const LeftOutRawData* left_out_;
  const EnclosingScope* scope_;
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_set<std::string> skipped_;
  absl::flat_hash_map<std::string, std::string> producer_of_;
  std::vector<std::string> node_names_;
};

}  // namespace

absl::Status ReadGraph(onnx::GraphProto* proto, const TensorSource& source, Graph* graph,
                       const LeftOutRawData* left_out) {
  return GraphReader(proto, source, graph, left_out).Read();
}

}  // namespace attune::importer
