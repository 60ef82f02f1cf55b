// The schema of the weight-only quantized product: com.microsoft.MatMulNBits,
// which Attune runs as its own op (the blocked 4/8/2-bit layout is the one
// every writer of quantized transformer files uses, so there is nothing to
// gain by translating it). Its input slots, attribute names, the parsed and
// checked parameters, and the words the reports use. The kernel, its shape
// rule, the exporter (which writes the node back unchanged) and the inspect
// report all read the op through here.
//
// Y = A · dequantize(B) (+ bias), where B is [N, K] quantized block-wise
// along K: W[n, k] = (q[n, k] - zero_point[n, k / block]) · scale[n, k / block].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/element_type.h"

namespace attune {
class Attributes;
}  // namespace attune

namespace attune::qmatmul {

inline constexpr char kDomain[] = "com.microsoft";
inline constexpr char kOpType[] = "MatMulNBits";

// Input slots.
inline constexpr int kInputA = 0;           // float32 or float16 [..., K]
inline constexpr int kInputB = 1;           // uint8 [N, k_blocks, blob_size]
inline constexpr int kInputScales = 2;      // A's type, [N, k_blocks] or [N * k_blocks]
inline constexpr int kInputZeroPoints = 3;  // optional: uint8 packed [N, ceil(k_blocks*bits/8)] (or flat), or A's type [N, k_blocks]
inline constexpr int kInputGroupIndex = 4;  // optional, deprecated: refused
inline constexpr int kInputBias = 5;        // optional: A's type [N]

// Attribute names.
inline constexpr char kK[] = "K";                           // int > 0, required
inline constexpr char kN[] = "N";                           // int > 0, required
inline constexpr char kBits[] = "bits";                     // 2, 4 or 8 (default 4)
inline constexpr char kBlockSize[] = "block_size";          // power of two >= 16, required
inline constexpr char kAccuracyLevel[] = "accuracy_level";  // 0..4 (default 0)

/// How the activations enter the product, from accuracy_level as ONNX
/// Runtime's CPU kernel reads it: level 4 quantizes A per block to int8,
/// every other level keeps A in float32.
enum class ActivationMode { kFloat32, kInt8Blocks };

/// The checked attributes of one node.
struct QuantizedMatMulParams {
  int64_t k = 0;
  int64_t n = 0;
  int64_t bits = 4;
  int64_t block_size = 0;
  int64_t accuracy_level = 0;

  int64_t k_blocks() const { return (k + block_size - 1) / block_size; }
  int64_t blob_size() const { return block_size * bits / 8; }
  /// Bytes of one row of packed uint8 zero points.
  int64_t zero_point_row_bytes() const { return (k_blocks() * bits + 7) / 8; }
  ActivationMode activation_mode() const {
    return accuracy_level == 4 ? ActivationMode::kInt8Blocks : ActivationMode::kFloat32;
  }
};

/// Reads and checks K, N, bits, block_size and accuracy_level. `label`
/// ("MatMulNBits node 'x'") starts every error message.
absl::StatusOr<QuantizedMatMulParams> ReadQuantizedMatMulParams(const Attributes& attrs, const std::string& label);

/// What is known of one input tensor for the shape checks.
struct TensorFacts {
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;
};

/// Checks the types and shapes of B, scales, the zero points and the bias
/// (each nullopt when absent) against the parameters and A's element type.
/// Every failure is one message naming the tensor.
absl::Status CheckQuantizedMatMulInputs(const QuantizedMatMulParams& params, const std::string& label,
                                        ElementType a_type, const TensorFacts& b, const TensorFacts& scales,
                                        const std::optional<TensorFacts>& zero_points,
                                        const std::optional<TensorFacts>& bias);

/// "MatMulNBits": the format name the reports give the op.
inline constexpr char kFormatName[] = "MatMulNBits";
/// "int8 activations per block" / "float32 activations".
const char* ActivationModeName(ActivationMode mode);
/// "symmetric", "asymmetric (uint8 zero points)" or "asymmetric (float zero points)".
std::string SymmetryName(bool has_zero_points, ElementType zero_point_type);

}  // namespace attune::qmatmul
