#include "core/schema/quantized_matmul.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "core/ir/attribute.h"

namespace attune::qmatmul {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ", "), "]"); }

bool ShapeIs(const std::vector<int64_t>& shape, std::initializer_list<int64_t> want) {
  return shape == std::vector<int64_t>(want);
}

// Scales and float zero points: [N, k_blocks], or the older flat [N * k_blocks].
absl::Status CheckPerBlock(const QuantizedMatMulParams& p, const std::string& label, const char* name,
                           const TensorFacts& t) {
  const int64_t n = p.n, kb = p.k_blocks();
  if (ShapeIs(t.shape, {n, kb}) || ShapeIs(t.shape, {n * kb})) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(label, ": input '", name, "' has shape ", ShapeString(t.shape),
                                                 ", expected [N, k_blocks] = [", n, ", ", kb, "] or [", n * kb,
                                                 "]"));
}

absl::Status CheckZeroPoints(const QuantizedMatMulParams& p, const std::string& label, ElementType a_type,
                             const TensorFacts& zp) {
  if (zp.type == ElementType::kUint8) {
    const int64_t n = p.n, row = p.zero_point_row_bytes();
    if (ShapeIs(zp.shape, {n, row}) || ShapeIs(zp.shape, {n * row})) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(label, ": input 'zero_points' (packed uint8) has shape ",
                                                   ShapeString(zp.shape), ", expected [N, ceil(k_blocks*bits/8)] = [",
                                                   n, ", ", row, "] or [", n * row, "]"));
  }
  if (zp.type != a_type)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input 'zero_points' is ", ElementTypeName(zp.type),
                                                   "; it must be uint8 (packed) or ", ElementTypeName(a_type),
                                                   " like A"));
  return CheckPerBlock(p, label, "zero_points", zp);
}

}  // namespace

absl::StatusOr<QuantizedMatMulParams> ReadQuantizedMatMulParams(const Attributes& attrs, const std::string& label) {
  QuantizedMatMulParams p;
  for (const char* name : {kK, kN, kBlockSize})
    if (!attrs.Has(name))
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute '", name, "' is required"));
  ASSIGN_OR_RETURN(p.k, attrs.GetInt(kK));
  ASSIGN_OR_RETURN(p.n, attrs.GetInt(kN));
  ASSIGN_OR_RETURN(p.bits, attrs.GetInt(kBits, 4));
  ASSIGN_OR_RETURN(p.block_size, attrs.GetInt(kBlockSize));
  ASSIGN_OR_RETURN(p.accuracy_level, attrs.GetInt(kAccuracyLevel, 0));
  // Bounds keep every product of these below 2^62 (K, N < 2^31).
  constexpr int64_t kMaxDim = int64_t{1} << 31;
  if (p.k <= 0 || p.k >= kMaxDim)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'K' is ", p.k, ", expected 1..2^31-1"));
  if (p.n <= 0 || p.n >= kMaxDim)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'N' is ", p.n, ", expected 1..2^31-1"));
  if (p.bits != 2 && p.bits != 4 && p.bits != 8)
    return absl::UnimplementedError(
        absl::StrCat(label, ": attribute 'bits' is ", p.bits, "; Attune runs 2, 4 and 8 bits (as ONNX Runtime does)"));
  if (p.block_size < 16 || p.block_size > (int64_t{1} << 20) || (p.block_size & (p.block_size - 1)) != 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'block_size' is ", p.block_size,
                                                   ", expected a power of two >= 16"));
  if (p.accuracy_level < 0 || p.accuracy_level > 4)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": attribute 'accuracy_level' is ", p.accuracy_level, ", expected 0..4"));
  return p;
}

absl::Status CheckQuantizedMatMulInputs(const QuantizedMatMulParams& p, const std::string& label, ElementType a_type,
                                        const TensorFacts& b, const TensorFacts& scales,
                                        const std::optional<TensorFacts>& zero_points,
                                        const std::optional<TensorFacts>& bias) {
  if (a_type != ElementType::kFloat32 && a_type != ElementType::kFloat16)
    return absl::UnimplementedError(
        absl::StrCat(label, ": input 'A' is ", ElementTypeName(a_type), "; Attune runs float32 and float16 A"));
  if (b.type != ElementType::kUint8)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": input 'B' is ", ElementTypeName(b.type), ", expected uint8 (packed blocks)"));
  if (!ShapeIs(b.shape, {p.n, p.k_blocks(), p.blob_size()}))
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": input 'B' has shape ", ShapeString(b.shape), ", expected [N, k_blocks, block_size*bits/8] = [", p.n,
        ", ", p.k_blocks(), ", ", p.blob_size(), "] for K=", p.k, " N=", p.n, " bits=", p.bits,
        " block_size=", p.block_size));
  if (scales.type != a_type)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input 'scales' is ", ElementTypeName(scales.type),
                                                   ", expected ", ElementTypeName(a_type), " like A"));
  RETURN_IF_ERROR(CheckPerBlock(p, label, "scales", scales));
  if (zero_points) RETURN_IF_ERROR(CheckZeroPoints(p, label, a_type, *zero_points));
  if (bias) {
    if (bias->type != a_type)
      return absl::InvalidArgumentError(absl::StrCat(label, ": input 'bias' is ", ElementTypeName(bias->type),
                                                     ", expected ", ElementTypeName(a_type), " like A"));
    if (!ShapeIs(bias->shape, {p.n}))
      return absl::InvalidArgumentError(absl::StrCat(label, ": input 'bias' has shape ", ShapeString(bias->shape),
                                                     ", expected [N] = [", p.n, "]"));
  }
  return absl::OkStatus();
}

const char* ActivationModeName(ActivationMode mode) {
  return mode == ActivationMode::kInt8Blocks ? "int8 activations per block" : "float32 activations";
}

std::string SymmetryName(bool has_zero_points, ElementType zero_point_type) {
  if (!has_zero_points) return "symmetric";
  return zero_point_type == ElementType::kUint8 ? "asymmetric (uint8 zero points)"
                                                : "asymmetric (float zero points)";
}

}  // namespace attune::qmatmul
