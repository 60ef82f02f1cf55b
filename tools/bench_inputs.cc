#include "tools/bench_inputs.h"

#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/session_access.h"
#include "tools/command_common.h"

namespace attune::cli {
namespace {

absl::StatusOr<std::vector<int64_t>> ParseDims(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  for (absl::string_view part : absl::StrSplit(text, 'x')) {
    int64_t d;
    if (!absl::SimpleAtoi(part, &d) || d < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("bad dimension ", QuoteName(std::string(part)), " in shape ", QuoteName(text)));
    dims.push_back(d);
  }
  return dims;
}

absl::StatusOr<std::pair<std::string, std::string>> SplitAssignment(const std::string& flag, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " expects NAME=VALUE, got ", QuoteName(text)));
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

// The exclusive upper bound for integer input `name`: the rows of the smallest
// constant table it indexes through Gather, or 16 when it indexes nothing.
int64_t IndexLimit(const Graph& graph, const std::string& name) {
  int64_t limit = -1;
  if (const Value* v = graph.FindValue(name)) {
    for (const Use& use : v->uses()) {
      const Node* n = use.node;
      if (n->op_type() != "Gather" || use.index != 1 || n->input(0) == nullptr || !n->input(0)->is_constant()) continue;
      // The value's shape: the data may be released (held by a kernel, or left in the model file).
      const std::optional<SymbolicShape>& table = n->input(0)->shape();
      if (!table.has_value() || !IsStatic(*table)) continue;
      const std::vector<int64_t> dims = StaticDims(*table);
      const int64_t rank = static_cast<int64_t>(dims.size());
      int64_t axis = n->attributes().GetInt("axis", 0).value_or(0);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      const int64_t rows = dims[axis];
      limit = limit < 0 ? rows : std::min(limit, rows);
    }
  }
  return limit > 0 ? limit : 16;
}

template <typename T>
void FillIntegers(Tensor& t, int64_t limit, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> dist(0, limit - 1);
  for (T& x : t.values<T>()) x = static_cast<T>(dist(rng));
}

absl::Status FillRandom(Tensor& t, int64_t index_limit, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  switch (t.type()) {
    case ElementType::kFloat32: for (float& x : t.values<float>()) x = uniform(rng); break;
    case ElementType::kFloat64: for (double& x : t.values<double>()) x = uniform(rng); break;
    case ElementType::kFloat16: for (Float16& x : t.values<Float16>()) x = FloatToHalf(uniform(rng)); break;
    case ElementType::kInt64: FillIntegers<int64_t>(t, index_limit, rng); break;
    case ElementType::kInt32: FillIntegers<int32_t>(t, index_limit, rng); break;
    case ElementType::kInt8: FillIntegers<int8_t>(t, std::min<int64_t>(index_limit, 127), rng); break;
    case ElementType::kUint8: FillIntegers<uint8_t>(t, std::min<int64_t>(index_limit, 255), rng); break;
    case ElementType::kBool: FillIntegers<uint8_t>(t, 2, rng); break;
    default:
      return absl::UnimplementedError(absl::StrCat("cannot generate ", ElementTypeName(t.type()), " input data"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NamedTensors> BuildBenchInputs(const Session& session, const Args& args, int64_t max_bytes) {
  ASSIGN_OR_RETURN(NamedTensors given, ReadInputs(args, max_bytes));
  absl::flat_hash_map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& text : args.Values("shape")) {
    ASSIGN_OR_RETURN(auto kv, SplitAssignment("shape", text));
    ASSIGN_OR_RETURN(shapes[kv.first], ParseDims(kv.second));
  }
  absl::flat_hash_map<std::string, int64_t> dims;
  for (const std::string& text : args.Values("dim")) {
    ASSIGN_OR_RETURN(auto kv, SplitAssignment("dim", text));
    int64_t d;
    if (!absl::SimpleAtoi(kv.second, &d) || d < 0)
      return absl::InvalidArgumentError(absl::StrCat("--dim ", kv.first, " needs a non-negative integer"));
    dims[kv.first] = d;
  }
  std::mt19937_64 rng(1234);
  NamedTensors inputs;
  for (const TensorInfo& info : session.inputs()) {
    auto it = std::find_if(given.begin(), given.end(), [&](const auto& p) { return p.first == info.name; });
    if (it != given.end()) {
      inputs.push_back(*it);
      continue;
    }
    std::vector<int64_t> shape;
    if (auto s = shapes.find(info.name); s != shapes.end()) {
      shape = s->second;
    } else {
      if (!info.has_shape)
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", QuoteName(info.name), " has no declared shape: give --shape ", info.name, "=AxB or --input"));
      for (size_t i = 0; i < info.shape.size(); ++i) {
        if (info.shape[i] >= 0) {
          shape.push_back(info.shape[i]);
          continue;
        }
        auto d = dims.find(info.shape_symbols[i]);
        if (info.shape_symbols[i].empty() || d == dims.end())
          return absl::InvalidArgumentError(absl::StrCat(
              "dimension ", i, " of input ", QuoteName(info.name), " is ",
              info.shape_symbols[i].empty() ? "unknown" : "'" + info.shape_symbols[i] + "'", ": give --dim ",
              info.shape_symbols[i].empty() ? "SYMBOL" : info.shape_symbols[i], "=N or --shape ", info.name, "=..."));
        shape.push_back(d->second);
      }
    }
    ASSIGN_OR_RETURN(Tensor t, Tensor::Create(info.type, shape, max_bytes));
    RETURN_IF_ERROR(FillRandom(t, IndexLimit(GetSessionImpl(session).graph(), info.name), rng));
    inputs.emplace_back(info.name, std::move(t));
  }
  return inputs;
}

}  // namespace attune::cli
