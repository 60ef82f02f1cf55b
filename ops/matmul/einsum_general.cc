#include "ops/matmul/einsum_general.h"

#include <type_traits>

#include "absl/strings/str_cat.h"

namespace attune {
namespace {

template <typename T>
using WideOf = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <typename T>
WideOf<T> Load(T v) {
  if constexpr (std::is_same_v<T, Float16>) return HalfToFloat(v);
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16ToFloat(v);
  else if constexpr (std::is_integral_v<T>) return static_cast<uint64_t>(static_cast<int64_t>(v));
  else return v;
}

template <typename T>
T Store(WideOf<T> v) {
  if constexpr (std::is_same_v<T, Float16>) return FloatToHalf(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return FloatToBFloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

// Per operand, the element stride of each label: the sum over the operand's
// dims carrying it (a repeated label walks the diagonal); broadcast dims of
// size 1 contribute nothing.
std::vector<std::vector<int64_t>> LabelStrides(const EinsumBinding& b, const std::vector<const Tensor*>& inputs) {
  std::vector<std::vector<int64_t>> strides(inputs.size(), std::vector<int64_t>(b.num_labels(), 0));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int64_t>& shape = inputs[i]->shape();
    int64_t stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] != 1) strides[i][b.input_labels[i][d]] += stride;
      stride *= shape[d];
    }
  }
  return strides;
}

template <typename T>
void Contract(const EinsumBinding& b, const std::vector<const Tensor*>& inputs, Tensor& out, int threads) {
  using Wide = WideOf<T>;
  const std::vector<std::vector<int64_t>> strides = LabelStrides(b, inputs);
  const size_t n_in = inputs.size();
  std::vector<bool> in_output(b.num_labels(), false);
  for (int l : b.output_labels) in_output[l] = true;
  std::vector<int> summed;
  for (int l = 0; l < b.num_labels(); ++l)
    if (!in_output[l] && b.label_size[l] > 0) summed.push_back(l);
  bool empty_sum = false;
  for (int l = 0; l < b.num_labels(); ++l)
    if (!in_output[l] && b.label_size[l] == 0) empty_sum = true;
  int64_t sum_count = 1;
  for (int l : summed) sum_count *= b.label_size[l];

  std::vector<const T*> data(n_in);
  for (size_t i = 0; i < n_in; ++i) data[i] = inputs[i]->template data<T>();
  T* result = out.data<T>();
  const int64_t total = out.num_elements();
  const int out_rank = static_cast<int>(b.output_labels.size());

#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> base(n_in), offset(n_in), counter(summed.size());
#pragma omp for schedule(static)
    for (int64_t o = 0; o < total; ++o) {
      if (empty_sum) {
        result[o] = T{};
        continue;
      }
      std::fill(base.begin(), base.end(), 0);
      int64_t rest = o;
      for (int d = out_rank - 1; d >= 0; --d) {
        const int label = b.output_labels[d];
        const int64_t coord = rest % b.label_size[label];
        rest /= b.label_size[label];
        for (size_t i = 0; i < n_in; ++i) base[i] += coord * strides[i][label];
      }
      offset = base;
      std::fill(counter.begin(), counter.end(), 0);
      Wide sum{};
      for (int64_t s = 0; s < sum_count; ++s) {
        Wide product = Load(data[0][offset[0]]);
        for (size_t i = 1; i < n_in; ++i) product *= Load(data[i][offset[i]]);
        sum += product;
        // Advance the odometer over the summed labels, last label fastest.
        for (int j = static_cast<int>(summed.size()) - 1; j >= 0; --j) {
          const int label = summed[j];
          if (++counter[j] < b.label_size[label]) {
            for (size_t i = 0; i < n_in; ++i) offset[i] += strides[i][label];
            break;
          }
          counter[j] = 0;
          for (size_t i = 0; i < n_in; ++i) offset[i] -= (b.label_size[label] - 1) * strides[i][label];
        }
      }
      result[o] = Store<T>(sum);
    }
  }
}

}  // namespace

bool EinsumGeneralSupports(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: case ElementType::kFloat64: case ElementType::kFloat16: case ElementType::kBFloat16:
    case ElementType::kInt8: case ElementType::kInt16: case ElementType::kInt32: case ElementType::kInt64:
    case ElementType::kUint8: case ElementType::kUint16: case ElementType::kUint32: case ElementType::kUint64:
      return true;
    default:
      return false;
  }
}

absl::Status EinsumGeneral(const EinsumBinding& binding, const std::vector<const Tensor*>& inputs, Tensor& out,
                           int threads) {
  if (out.num_elements() == 0) return absl::OkStatus();
  switch (out.type()) {
    case ElementType::kFloat32: Contract<float>(binding, inputs, out, threads); break;
    case ElementType::kFloat64: Contract<double>(binding, inputs, out, threads); break;
    case ElementType::kFloat16: Contract<Float16>(binding, inputs, out, threads); break;
    case ElementType::kBFloat16: Contract<BFloat16>(binding, inputs, out, threads); break;
    case ElementType::kInt8: Contract<int8_t>(binding, inputs, out, threads); break;
    case ElementType::kInt16: Contract<int16_t>(binding, inputs, out, threads); break;
    case ElementType::kInt32: Contract<int32_t>(binding, inputs, out, threads); break;
    case ElementType::kInt64: Contract<int64_t>(binding, inputs, out, threads); break;
    case ElementType::kUint8: Contract<uint8_t>(binding, inputs, out, threads); break;
    case ElementType::kUint16: Contract<uint16_t>(binding, inputs, out, threads); break;
    case ElementType::kUint32: Contract<uint32_t>(binding, inputs, out, threads); break;
    case ElementType::kUint64: Contract<uint64_t>(binding, inputs, out, threads); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("Einsum: element type ", ElementTypeName(out.type()), " is not supported"));
  }
  return absl::OkStatus();
}

}  // namespace attune
