// oneDNN 2.6 multiplies u8 or s8 rows by s8 weights only (u8 · u8 fails to
// create a primitive), so uint8 weights are stored as b − 128 and every zero
// point is applied afterwards from row and column sums, in integers:
//   Σ_k (a − za)(b − zb) = Σ_k a·bs + c·Σ_k a − za·Σ_k bs − K·za·c,
// with bs = b (int8) or b − 128 (uint8) and c = (0 or 128) − zb per column.
// Unsigned arithmetic wraps where int32 would overflow; the result is exact
// wherever the portable product's is.
#include "ops/quantize/integer_product_onednn.h"

#include <tuple>
#include <unordered_map>

#include "core/common/status_macros.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "ops/common/lru_cache.h"
#include "ops/common/omp_team_scope.h"
#include "ops/common/onednn_engine.h"
#include "ops/common/parallel.h"

namespace attune::quantize {
namespace {

using dnnl::memory;

constexpr int64_t kLayoutProbeRows = 128;
constexpr size_t kPrimitivesPerWeight = 16;

bool CpuHasVnni() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
    case dnnl::cpu_isa::avx2_vnni: return true;
    default: return false;
  }
}

struct Primitive {
  dnnl::matmul matmul;
  memory::desc scratchpad;
};

class OneDnnIntegerProduct final : public IntegerProduct {
 public:
  OneDnnIntegerProduct(int64_t k, int64_t n) : IntegerProduct(k, n) {}

  absl::Status Init(const void* b, bool b_signed, const std::vector<int32_t>& zps) {
    std::vector<int8_t> bs(static_cast<size_t>(k_ * n_));
    col_sum_.assign(static_cast<size_t>(n_), 0);
    col_offset_.assign(static_cast<size_t>(n_), 0);
    for (int64_t r = 0; r < k_; ++r)
      for (int64_t c = 0; c < n_; ++c) {
        const int32_t v = b_signed ? static_cast<const int8_t*>(b)[r * n_ + c]
                                   : static_cast<int32_t>(static_cast<const uint8_t*>(b)[r * n_ + c]) - 128;
        bs[r * n_ + c] = static_cast<int8_t>(v);
        col_sum_[c] += v;
      }
    for (int64_t c = 0; c < n_; ++c)
      col_offset_[c] = (b_signed ? 0 : 128) - (zps.empty() ? 0 : zps[zps.size() == 1 ? 0 : c]);
    try {
      const memory::desc any({k_, n_}, memory::data_type::s8, memory::format_tag::any);
      weights_md_ = MakePd(kLayoutProbeRows, false, any).weights_desc();
      memory plain(memory::desc({k_, n_}, memory::data_type::s8, memory::format_tag::ab), OneDnnCpuEngine(),
                   bs.data());
      weights_ = memory(weights_md_, OneDnnCpuEngine());
      dnnl::stream stream(OneDnnCpuEngine());
      dnnl::reorder(plain, weights_).execute(stream, plain, weights_);
      stream.wait();
    } catch (const dnnl::error& e) {
      return FromDnnlError("int8 weight packing", e);
    }
    return absl::OkStatus();
  }

  absl::Status Run(const IntegerRows& a, int32_t* out, int threads) const override {
    if (a.m == 0) return absl::OkStatus();
    OmpTeamScope team(threads);
    try {
      ASSIGN_OR_RETURN(std::shared_ptr<const Primitive> p, Get(a.m, a.is_signed));
      std::unordered_map<int, memory> args;
      args.emplace(DNNL_ARG_SRC, memory(SrcDesc(a.m, a.is_signed), OneDnnCpuEngine(), const_cast<void*>(a.data)));
      args.emplace(DNNL_ARG_WEIGHTS, weights_);
      args.emplace(DNNL_ARG_DST, memory(DstDesc(a.m), OneDnnCpuEngine(), out));
      ExecuteOneDnnWithScratchpad(p->matmul, p->scratchpad, args);
    } catch (const dnnl::error& e) {
      return FromDnnlError("int8 matmul", e);
    }
    ApplyZeroPoints(a, out, threads);
    return absl::OkStatus();
  }

  const char* path() const override { return "onednn-vnni"; }

 private:
  memory::desc SrcDesc(int64_t m, bool is_signed) const {
    return memory::desc({m, k_}, is_signed ? memory::data_type::s8 : memory::data_type::u8, memory::format_tag::ab);
  }
  memory::desc DstDesc(int64_t m) const { return memory::desc({m, n_}, memory::data_type::s32, memory::format_tag::ab); }

  dnnl::matmul::primitive_desc MakePd(int64_t m, bool is_signed, const memory::desc& weights) const {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(SrcDesc(m, is_signed), weights, DstDesc(m)), attr,
                                        OneDnnCpuEngine());
  }

  absl::StatusOr<std::shared_ptr<const Primitive>> Get(int64_t m, bool is_signed) const {
    return primitives_.GetOrCreate(std::tuple<int64_t, bool, int>(m, is_signed, OneDnnTeamSize()),
                                   [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
                                     auto pd = MakePd(m, is_signed, weights_md_);
                                     return std::make_shared<const Primitive>(
                                         Primitive{dnnl::matmul(pd), pd.scratchpad_desc()});
                                   });
  }

  // out += c·rowsum(a) − za·colsum(bs) − K·za·c, per element, wrapping.
  void ApplyZeroPoints(const IntegerRows& a, int32_t* out, int threads) const {
    ParallelForRange(a.m, 1, threads, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        uint32_t row_sum = 0;
        for (int64_t kk = 0; kk < k_; ++kk)
          row_sum += a.is_signed ? static_cast<uint32_t>(static_cast<const int8_t*>(a.data)[m * k_ + kk])
                                 : static_cast<uint32_t>(static_cast<const uint8_t*>(a.data)[m * k_ + kk]);
        const uint32_t za = static_cast<uint32_t>(a.zero_point(m));
        int32_t* row = out + m * n_;
        for (int64_t c = 0; c < n_; ++c) {
          const uint32_t cc = static_cast<uint32_t>(col_offset_[c]);
          const uint32_t v = static_cast<uint32_t>(row[c]) + cc * row_sum - za * static_cast<uint32_t>(col_sum_[c]) -
                             static_cast<uint32_t>(k_) * za * cc;
          row[c] = static_cast<int32_t>(v);
        }
      }
    });
  }

  memory::desc weights_md_;
  memory weights_;
  std::vector<int32_t> col_sum_;     // Σ_k bs[k, n]
  std::vector<int32_t> col_offset_;  // c[n]
  mutable LruCache<std::tuple<int64_t, bool, int>, Primitive> primitives_{kPrimitivesPerWeight};
};

}  // namespace

absl::StatusOr<std::unique_ptr<IntegerProduct>> CreateOneDnnIntegerProduct(const void* b, bool b_signed, int64_t k,
                                                                          int64_t n,
                                                                          const std::vector<int32_t>& zero_points) {
  if (!CpuHasVnni() || k <= 0 || n <= 0) return std::unique_ptr<IntegerProduct>();
  auto product = std::make_unique<OneDnnIntegerProduct>(k, n);
  RETURN_IF_ERROR(product->Init(b, b_signed, zero_points));
  return std::unique_ptr<IntegerProduct>(std::move(product));
}

}  // namespace attune::quantize
