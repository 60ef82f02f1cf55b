#include "importer/file_weights.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "core/common/status_macros.h"
#include "importer/mapped_file.h"

namespace attune::importer {
namespace {

constexpr int64_t kMinBytes = int64_t{1} << 20;

bool IsFloat(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}

// Whether input `i` of `node` reads a constant in place.
bool ReadsInPlace(const onnx::NodeProto& node, int i, bool for_compression) {
  const std::string& op = node.op_type();
  const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
  if (node.domain() == "com.microsoft" && op == "MatMulNBits") return true;  // restored once, held packed
  if (!standard) return false;
  if (op == "Gather") return i == 0;
  if (!for_compression) return false;
  return ((op == "MatMul" || op == "Gemm") && i == 1) || op == "Transpose" || op == "Cast";
}

}  // namespace

FileWeightPolicy::FileWeightPolicy(const onnx::GraphProto& graph, bool for_compression)
    : for_compression_(for_compression) {
  absl::flat_hash_set<std::string> consumed;
  for (const auto& node : graph.node())
    for (const std::string& in : node.input()) consumed.insert(in);
  for (const auto& out : graph.output()) consumed.insert(out.name());
  for (const auto& node : graph.node()) {
    // A subgraph may read an outer constant by name: its readers are not all listed here.
    for (const auto& attr : node.attribute())
      if (attr.has_g() || attr.graphs_size() > 0) enabled_ = false;
    // A node none of whose outputs is read is dead (a writer's leftover Transpose of a tied table).
    if (std::none_of(node.output().begin(), node.output().end(),
                     [&](const std::string& out) { return consumed.contains(out); }))
      continue;
    for (int i = 0; i < node.input_size(); ++i) {
      auto [it, inserted] = in_place_readers_only_.try_emplace(node.input(i), true);
      it->second = it->second && ReadsInPlace(node, i, for_compression);
    }
  }
  for (const auto& out : graph.output()) in_place_readers_only_[out.name()] = false;
}

absl::StatusOr<std::shared_ptr<const FileConstant>> FileWeightPolicy::Defer(
    const onnx::TensorProto& init, const MappedRawData& raw) const {
  if (!enabled_ || raw.file == nullptr || raw.span.size < kMinBytes) return nullptr;
  auto readers = in_place_readers_only_.find(init.name());
  if (readers == in_place_readers_only_.end() || !readers->second) return nullptr;
  auto type = ElementTypeFromOnnx(init.data_type(), "");
  if (!type.ok() || !IsFloat(*type)) return nullptr;
  const int64_t element_size = static_cast<int64_t>(ElementSize(*type));
  // Aligned data is mapped as a tensor without a copy; compression still takes it in place to give its pages back.
  if (raw.span.offset % element_size == 0 && !for_compression_) return nullptr;
  std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
  auto count = CheckedElementCount(dims);
  // Anything that does not add up is left to the reader's checks and messages.
  if (!count.ok() || *count * element_size != raw.span.size) return nullptr;
  return MappedFileConstant(raw.file, raw.span.offset, *type, std::move(dims));
}

}  // namespace attune::importer
