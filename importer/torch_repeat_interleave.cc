#include "importer/torch_repeat_interleave.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "importer/proto_tensor.h"

namespace attune::importer {
namespace {

using Nodes = std::map<std::string, const onnx::NodeProto*>;  // value name -> producer

Nodes ProducersOf(const onnx::GraphProto& g) {
  Nodes out;
  for (const onnx::NodeProto& n : g.node())
    for (const std::string& o : n.output())
      if (!o.empty()) out[o] = &n;
  return out;
}

bool Is(const onnx::NodeProto* n, const char* op, int inputs = -1) {
  return n != nullptr && (n->domain().empty() || n->domain() == "ai.onnx") && n->op_type() == op &&
         (inputs < 0 || n->input_size() == inputs);
}

const onnx::NodeProto* Producer(const Nodes& nodes, const std::string& name) {
  auto it = nodes.find(name);
  return it == nodes.end() ? nullptr : it->second;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::optional<int64_t> IntAttr(const onnx::NodeProto& n, const char* name, int64_t absent) {
  const onnx::AttributeProto* a = Attr(n, name);
  if (a == nullptr) return absent;
  if (a->type() != onnx::AttributeProto::INT) return std::nullopt;
  return a->i();
}

// The int64 values of a constant: a Constant node's tensor (in `local` or the
// outer graph) or an initializer; nullopt for anything else.
class Constants {
 public:
  Constants(const onnx::GraphProto& outer, const Nodes& outer_nodes) : outer_nodes_(outer_nodes) {
    for (const auto& init : outer.initializer()) initializers_[init.name()] = &init;
  }

  std::optional<std::vector<int64_t>> Ints(const std::string& name, const Nodes* local = nullptr) const {
    const onnx::NodeProto* n = local != nullptr ? Producer(*local, name) : nullptr;
    if (n == nullptr) n = Producer(outer_nodes_, name);
    const onnx::TensorProto* t = nullptr;
    if (n != nullptr) {
      if (!Is(n, "Constant", 0) || n->attribute_size() != 1 || n->attribute(0).name() != "value" ||
          n->attribute(0).type() != onnx::AttributeProto::TENSOR)
        return std::nullopt;
      t = &n->attribute(0).t();
    } else if (auto it = initializers_.find(name); it != initializers_.end()) {
      t = it->second;
    }
    if (t == nullptr || t->data_type() != onnx::TensorProto::INT64) return std::nullopt;
    auto tensor = TensorFromProto(*t, "constant", TensorSource{});
    if (!tensor.ok() || tensor->rank() > 1) return std::nullopt;
    auto values = tensor->values<int64_t>();
    return std::vector<int64_t>(values.begin(), values.end());
  }

  // A boolean constant true, directly or through Cast(to=BOOL) of a true or non-zero constant.
  bool True(const std::string& name, const Nodes* local = nullptr) const {
    const onnx::NodeProto* n = local != nullptr ? Producer(*local, name) : nullptr;
    if (n == nullptr) n = Producer(outer_nodes_, name);
    if (Is(n, "Cast", 1) && IntAttr(*n, "to", -1) == onnx::TensorProto::BOOL) {
      if (True(n->input(0), local)) return true;
      auto v = Ints(n->input(0), local);
      return v && v->size() == 1 && (*v)[0] != 0;
    }
    if (Is(n, "Constant", 0) && n->attribute_size() == 1 && n->attribute(0).name() == "value" &&
        n->attribute(0).type() == onnx::AttributeProto::TENSOR) {
      const onnx::TensorProto& t = n->attribute(0).t();
      if (t.data_type() != onnx::TensorProto::BOOL) return false;
      auto tensor = TensorFromProto(t, "constant", TensorSource{});
      return tensor.ok() && tensor->num_elements() == 1 && tensor->data<bool>()[0];
    }
    return false;
  }

  // ConstantOfShape(Shape(of)) filled with int64 1.
  bool OnesShaped(const onnx::NodeProto* n, const std::string& of, const Nodes& nodes) const {
    if (!Is(n, "ConstantOfShape", 1)) return false;
    const onnx::NodeProto* shape = Producer(nodes, n->input(0));
    if (!Is(shape, "Shape", 1) || shape->input(0) != of || shape->attribute_size() != 0) return false;
    const onnx::AttributeProto* value = Attr(*n, "value");
    if (value == nullptr || value->type() != onnx::AttributeProto::TENSOR ||
        value->t().data_type() != onnx::TensorProto::INT64)
      return false;
    auto tensor = TensorFromProto(value->t(), "constant", TensorSource{});
    return tensor.ok() && tensor->num_elements() == 1 && tensor->data<int64_t>()[0] == 1;
  }

 private:
  const Nodes& outer_nodes_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
};

// Unsqueeze's axes: the attribute (before opset 13) or a constant input.
std::optional<std::vector<int64_t>> UnsqueezeAxes(const onnx::NodeProto& n, const Constants& c, const Nodes* local) {
  if (n.input_size() == 2) return c.Ints(n.input(1), local);
  const onnx::AttributeProto* axes = Attr(n, "axes");
  if (n.input_size() != 1 || axes == nullptr || axes->type() != onnx::AttributeProto::INTS) return std::nullopt;
  return std::vector<int64_t>(axes->ints().begin(), axes->ints().end());
}

// The matched emission: what the rewrite needs and the nodes it replaces.
struct Emission {
  std::string x;
  int64_t axis = 0;
  std::vector<int64_t> expand_to;  // C1 ++ [r] ++ C2, -1 read as 1
  std::vector<int64_t> view;       // C3
  int64_t allowzero = 0;
  std::set<const onnx::NodeProto*> replaced;
};

int Uses(const onnx::GraphProto& g, const std::string& name) {
  int n = 0;
  for (const auto& node : g.node())
    for (const std::string& in : node.input()) n += in == name;
  for (const auto& o : g.output()) n += o.name() == name;
  return n;
}

// x's size along `axis` unsqueezed: Unsqueeze(Gather(Shape(x), axis), [0]), torch's _size_helper.
bool IsSizeOf(const std::string& value, const std::string& x, int64_t axis, const Nodes& nodes, const Constants& c) {
  const onnx::NodeProto* unsqueeze = Producer(nodes, value);
  if (!Is(unsqueeze, "Unsqueeze") || UnsqueezeAxes(*unsqueeze, c, nullptr) != std::vector<int64_t>{0}) return false;
  const onnx::NodeProto* gather = Producer(nodes, unsqueeze->input(0));
  if (!Is(gather, "Gather", 2) || IntAttr(*gather, "axis", 0) != 0) return false;
  const onnx::NodeProto* shape = Producer(nodes, gather->input(0));
  const auto index = c.Ints(gather->input(1));
  return Is(shape, "Shape", 1) && shape->attribute_size() == 0 && shape->input(0) == x && index &&
         index->size() == 1 && (*index)[0] == axis;
}

// S = SplitToSequence(source, ConstantOfShape(Shape(R)) of ones, axis): the
// source cut into pieces of one along `axis`; returns the source.
std::optional<std::string> SplitIntoOnes(const onnx::NodeProto* split, const std::string& repeats, const Nodes& nodes,
                                         const Constants& c, std::optional<int64_t> axis) {
  if (!Is(split, "SplitToSequence", 2) || IntAttr(*split, "keepdims", 1) != 1) return std::nullopt;
  const auto a = IntAttr(*split, "axis", 0);
  if (!a || (axis && *a != *axis)) return std::nullopt;
  if (!c.OnesShaped(Producer(nodes, split->input(1)), repeats, nodes)) return std::nullopt;
  return split->input(0);
}

std::optional<Emission> Match(const onnx::GraphProto& g, const Nodes& nodes, const Constants& c,
                              const onnx::NodeProto& concat) {
  Emission e;
  if (!Is(&concat, "ConcatFromSequence", 1) || concat.output_size() != 1 || concat.output(0).empty() ||
      IntAttr(concat, "new_axis", 0) != 0)
    return std::nullopt;
  const auto axis = IntAttr(concat, "axis", -1);
  if (!axis || *axis < 0) return std::nullopt;  // torch writes the dim it normalised
  e.axis = *axis;
  const onnx::NodeProto* loop = Producer(nodes, concat.input(0));
  if (!Is(loop, "Loop", 3) || loop->output_size() != 1 || Uses(g, concat.input(0)) != 1) return std::nullopt;
  const onnx::AttributeProto* body_attr = Attr(*loop, "body");
  if (loop->attribute_size() != 1 || body_attr == nullptr || body_attr->type() != onnx::AttributeProto::GRAPH)
    return std::nullopt;
  const onnx::NodeProto* empty = Producer(nodes, loop->input(2));
  if (!Is(empty, "SequenceEmpty", 0) || Uses(g, loop->input(2)) != 1 || !c.True(loop->input(1))) return std::nullopt;

  const onnx::GraphProto& body = body_attr->g();
  if (body.input_size() != 3 || body.output_size() != 2 || body.initializer_size() != 0) return std::nullopt;
  const Nodes local = ProducersOf(body);
  const std::string& iter = body.input(0).name();
  const std::string& cond_in = body.input(1).name();
  if (body.output(0).name() != cond_in && !c.True(body.output(0).name(), &local)) return std::nullopt;
  const onnx::NodeProto* insert = Producer(local, body.output(1).name());
  if (!Is(insert, "SequenceInsert", 2) || insert->input(0) != body.input(2).name()) return std::nullopt;
  const onnx::NodeProto* reshape = Producer(local, insert->input(1));
  if (!Is(reshape, "Reshape", 2)) return std::nullopt;
  const auto allowzero = IntAttr(*reshape, "allowzero", 0);
  const auto view = c.Ints(reshape->input(1), &local);
  // -1 at the axis and a number after it: each slice's -1 is r, the whole's n * r.
  if (!allowzero || !view || static_cast<int64_t>(view->size()) <= e.axis || (*view)[e.axis] != -1) return std::nullopt;
  for (size_t i = 0; i < view->size(); ++i)
    if (static_cast<int64_t>(i) != e.axis && ((*view)[i] < 0 || (static_cast<int64_t>(i) > e.axis && (*view)[i] == 0)))
      return std::nullopt;
  e.view = *view;
  e.allowzero = *allowzero;
  const onnx::NodeProto* expand = Producer(local, reshape->input(0));
  if (!Is(expand, "Expand", 2)) return std::nullopt;
  // The target: the Concat itself, or torch's Where(Equal(c, -ones), ones, c) that reads -1 as 1.
  std::string target = expand->input(1);
  bool minus_one_is_one = false;
  if (const onnx::NodeProto* where = Producer(local, target); Is(where, "Where", 3)) {
    const std::string& cat = where->input(2);
    const onnx::NodeProto* equal = Producer(local, where->input(0));
    if (!Is(equal, "Equal", 2) || equal->input(0) != cat || !c.OnesShaped(Producer(local, where->input(1)), cat, local))
      return std::nullopt;
    const onnx::NodeProto* minus = Producer(local, equal->input(1));
    if (!Is(minus, "Mul", 2)) return std::nullopt;
    const int ones_at = c.OnesShaped(Producer(local, minus->input(0)), cat, local) ? 0 : 1;
    const auto minus_one = c.Ints(minus->input(1 - ones_at), &local);
    if (!c.OnesShaped(Producer(local, minus->input(ones_at)), cat, local) || !minus_one ||
        *minus_one != std::vector<int64_t>{-1})
      return std::nullopt;
    target = cat;
    minus_one_is_one = true;
  }
  const onnx::NodeProto* cat = Producer(local, target);
  if (!Is(cat, "Concat", 3) || IntAttr(*cat, "axis", -1) != 0) return std::nullopt;
  const auto before = c.Ints(cat->input(0), &local);
  const auto after = c.Ints(cat->input(2), &local);
  if (!before || !after || static_cast<int64_t>(before->size()) != e.axis + 1) return std::nullopt;
  const onnx::NodeProto* unsqueeze = Producer(local, expand->input(0));
  if (!Is(unsqueeze, "Unsqueeze") || UnsqueezeAxes(*unsqueeze, c, &local) != std::vector<int64_t>{e.axis + 1})
    return std::nullopt;
  const onnx::NodeProto* x_at = Producer(local, unsqueeze->input(0));
  const onnx::NodeProto* r_at = Producer(local, cat->input(1));
  if (!Is(x_at, "SequenceAt", 2) || !Is(r_at, "SequenceAt", 2) || x_at->input(1) != iter || r_at->input(1) != iter)
    return std::nullopt;
  // Every node the body's outputs read has been checked above; any other is
  // dead (ONNX ops have no side effects).

  // Outside: the two splits, the repeats Expand(r, n) and n = size(x, axis), the trip count.
  const onnx::NodeProto* x_split = Producer(nodes, x_at->input(0));
  const onnx::NodeProto* r_split = Producer(nodes, r_at->input(0));
  if (x_split == nullptr || r_split == nullptr) return std::nullopt;
  const onnx::NodeProto* repeats = Producer(nodes, r_split->input_size() == 2 ? r_split->input(0) : "");
  if (!Is(repeats, "Expand", 2) || repeats->input(1) != loop->input(0)) return std::nullopt;
  const auto r = c.Ints(repeats->input(0));
  if (!r || r->size() != 1 || (*r)[0] < 0) return std::nullopt;
  const std::string& repeats_value = repeats->output(0);
  if (!SplitIntoOnes(r_split, repeats_value, nodes, c, 0)) return std::nullopt;
  const auto x = SplitIntoOnes(x_split, repeats_value, nodes, c, e.axis);
  if (!x || !IsSizeOf(loop->input(0), *x, e.axis, nodes, c)) return std::nullopt;
  // The sequences are read by this loop alone.
  if (Uses(g, x_split->output(0)) != 0 || Uses(g, r_split->output(0)) != 0) return std::nullopt;
  e.x = *x;
  e.expand_to = *before;
  e.expand_to.push_back((*r)[0]);
  e.expand_to.insert(e.expand_to.end(), after->begin(), after->end());
  for (int64_t& d : e.expand_to) {
    if (d == -1 && minus_one_is_one) d = 1;
    if (d < 0) return std::nullopt;
  }
  e.replaced = {&concat, loop, empty, x_split, r_split};
  return e;
}

void AddInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

std::string FreshName(const onnx::GraphProto& g, const std::string& base, std::set<std::string>& taken) {
  if (taken.empty()) {
    for (const auto& n : g.node())
      for (const std::string& o : n.output()) taken.insert(o);
    for (const auto& i : g.initializer()) taken.insert(i.name());
    for (const auto& i : g.input()) taken.insert(i.name());
  }
  std::string name = base;
  for (int k = 1; taken.contains(name); ++k) name = absl::StrCat(base, "_", k);
  taken.insert(name);
  return name;
}

}  // namespace

absl::StatusOr<int> RewriteTorchRepeatInterleave(onnx::GraphProto* graph, int64_t opset) {
  int rewritten = 0;
  std::set<std::string> taken;
  while (true) {
    const Nodes nodes = ProducersOf(*graph);
    const Constants constants(*graph, nodes);
    std::optional<Emission> found;
    const onnx::NodeProto* at = nullptr;
    for (const onnx::NodeProto& n : graph->node()) {
      if (!Is(&n, "ConcatFromSequence", 1)) continue;
      found = Match(*graph, nodes, constants, n);
      if (found) {
        at = &n;
        break;
      }
    }
    if (!found) return rewritten;
    const std::string out = at->output(0);
    const std::string base = at->name().empty() ? out : at->name();
    std::set<std::string> dropped;
    for (const onnx::NodeProto* n : found->replaced)
      for (const std::string& o : n->output()) dropped.insert(o);
    // The three ops, placed where the ConcatFromSequence was (its inputs are all computed by then).
    onnx::NodeProto unsqueeze, expand, reshape;
    const std::string x_u = FreshName(*graph, base + "/repeat_unsqueezed", taken);
    const std::string x_e = FreshName(*graph, base + "/repeat_expanded", taken);
    unsqueeze.set_op_type("Unsqueeze");
    unsqueeze.set_name(x_u);
    unsqueeze.add_input(found->x);
    if (opset >= 13) {
      const std::string axes = FreshName(*graph, base + "/repeat_axes", taken);
      AddInitializer(graph, axes, {found->axis + 1});
      unsqueeze.add_input(axes);
    } else {
      onnx::AttributeProto* a = unsqueeze.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(found->axis + 1);
    }
    unsqueeze.add_output(x_u);
    const std::string target = FreshName(*graph, base + "/repeat_target", taken);
    AddInitializer(graph, target, found->expand_to);
    expand.set_op_type("Expand");
    expand.set_name(x_e);
    expand.add_input(x_u);
    expand.add_input(target);
    expand.add_output(x_e);
    const std::string view = FreshName(*graph, base + "/repeat_view", taken);
    AddInitializer(graph, view, found->view);
    reshape.set_op_type("Reshape");
    reshape.set_name(FreshName(*graph, base + "/repeat_interleave", taken));
    reshape.add_input(x_e);
    reshape.add_input(view);
    reshape.add_output(out);
    if (found->allowzero != 0) {
      onnx::AttributeProto* a = reshape.add_attribute();
      a->set_name("allowzero");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(found->allowzero);
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (const onnx::NodeProto& n : graph->node()) {
      if (&n == at) {
        *kept.Add() = unsqueeze;
        *kept.Add() = expand;
        *kept.Add() = reshape;
        continue;
      }
      if (!found->replaced.contains(&n)) *kept.Add() = n;
    }
    graph->mutable_node()->Swap(&kept);
    // The sequences' declared types go with them.
    auto* infos = graph->mutable_value_info();
    for (int i = infos->size() - 1; i >= 0; --i)
      if (dropped.contains(infos->Get(i).name()) && infos->Get(i).name() != out) infos->DeleteSubrange(i, 1);
    ++rewritten;
  }
}

}  // namespace attune::importer
