#include "ops/quantized/bf16_product_onednn.h"

#include <string>
#include <tuple>
#include <unordered_map>

#include "core/common/status_macros.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "ops/common/lru_cache.h"
#include "ops/common/omp_team_scope.h"
#include "ops/common/onednn_engine.h"

namespace attune::quantized {
namespace {

using dnnl::memory;

// Rows the packed layout is chosen for: oneDNN picks the same blocking for
// any prefill length, and the decode rows read it as well.
constexpr int64_t kLayoutProbeRows = 128;
constexpr size_t kPrimitivesPerWeight = 16;

struct Primitive {
  dnnl::matmul matmul;
  memory::desc scratchpad;
};

// The packed weights, and the holder of the [N, K] constant they came from.
struct PackedBf16 final : ConstantHolder {
  int64_t n = 0, k = 0;
  memory data;

  absl::StatusOr<Tensor> Restore() const override {
    ASSIGN_OR_RETURN(Tensor plain, Tensor::CreateUninitialized(ElementType::kBFloat16, {n, k}));
    try {
      memory out(memory::desc({k, n}, memory::data_type::bf16, memory::format_tag::ba), OneDnnCpuEngine(),
                 plain.raw_data());
      dnnl::stream stream(OneDnnCpuEngine());
      dnnl::reorder(data, out).execute(stream, const_cast<memory&>(data), out);
      stream.wait();
    } catch (const dnnl::error& e) {
      return FromDnnlError("bf16 weight unpacking", e);
    }
    return plain;
  }
};

class OneDnnBf16Product final : public Bf16PackedProduct {
 public:
  OneDnnBf16Product(int64_t n, int64_t k) : n_(n), k_(k) {}

  // Packs W; false when oneDNN offers only its reference loop for bf16 here.
  absl::StatusOr<bool> Init(const uint16_t* w) {
    try {
      const auto pd = MakePd(kLayoutProbeRows, memory::desc({k_, n_}, memory::data_type::bf16, memory::format_tag::any));
      if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return false;
      packed_ = std::make_shared<PackedBf16>();
      packed_->n = n_;
      packed_->k = k_;
      packed_->data = memory(pd.weights_desc(), OneDnnCpuEngine());
      memory plain(memory::desc({k_, n_}, memory::data_type::bf16, memory::format_tag::ba), OneDnnCpuEngine(),
                   const_cast<uint16_t*>(w));
      dnnl::stream stream(OneDnnCpuEngine());
      dnnl::reorder(plain, packed_->data).execute(stream, plain, packed_->data);
      stream.wait();
    } catch (const dnnl::error& e) {
      if (e.status == dnnl_unimplemented) return false;
      return FromDnnlError("bf16 weight packing", e);
    }
    return true;
  }

  absl::Status Run(const uint16_t* a, int64_t m, const float* bias, float* y, int threads) const override {
    if (m == 0) return absl::OkStatus();
    OmpTeamScope team(threads);
    try {
      ASSIGN_OR_RETURN(std::shared_ptr<const Primitive> p, Get(m, bias != nullptr));
      std::unordered_map<int, memory> args;
      args.emplace(DNNL_ARG_SRC, memory(SrcDesc(m), OneDnnCpuEngine(), const_cast<uint16_t*>(a)));
      args.emplace(DNNL_ARG_WEIGHTS, packed_->data);
      args.emplace(DNNL_ARG_DST, memory(DstDesc(m), OneDnnCpuEngine(), y));
      if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, memory(BiasDesc(), OneDnnCpuEngine(), const_cast<float*>(bias)));
      ExecuteOneDnnWithScratchpad(p->matmul, p->scratchpad, args);
    } catch (const dnnl::error& e) {
      return FromDnnlError("bf16 matmul", e);
    }
    return absl::OkStatus();
  }

  std::shared_ptr<const ConstantHolder> holder() const override { return packed_; }

 private:
  memory::desc SrcDesc(int64_t m) const { return memory::desc({m, k_}, memory::data_type::bf16, memory::format_tag::ab); }
  memory::desc DstDesc(int64_t m) const { return memory::desc({m, n_}, memory::data_type::f32, memory::format_tag::ab); }
  memory::desc BiasDesc() const { return memory::desc({1, n_}, memory::data_type::f32, memory::format_tag::ab); }

  dnnl::matmul::primitive_desc MakePd(int64_t m, const memory::desc& weights, bool with_bias = false) const {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto desc = with_bias ? dnnl::matmul::desc(SrcDesc(m), weights, BiasDesc(), DstDesc(m))
                                : dnnl::matmul::desc(SrcDesc(m), weights, DstDesc(m));
    return dnnl::matmul::primitive_desc(desc, attr, OneDnnCpuEngine());
  }

  absl::StatusOr<std::shared_ptr<const Primitive>> Get(int64_t m, bool with_bias) const {
    return primitives_.GetOrCreate(std::tuple<int64_t, bool, int>(m, with_bias, OneDnnTeamSize()),
                                   [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
                                     auto pd = MakePd(m, packed_->data.get_desc(), with_bias);
                                     return std::make_shared<const Primitive>(
                                         Primitive{dnnl::matmul(pd), pd.scratchpad_desc()});
                                   });
  }

  int64_t n_, k_;
  std::shared_ptr<PackedBf16> packed_;
  mutable LruCache<std::tuple<int64_t, bool, int>, Primitive> primitives_{kPrimitivesPerWeight};
};

}  // namespace

absl::StatusOr<std::unique_ptr<Bf16PackedProduct>> Bf16PackedProduct::Create(const uint16_t* w, int64_t n,
                                                                             int64_t k) {
  if (n <= 0 || k <= 0) return std::unique_ptr<Bf16PackedProduct>();
  auto product = std::make_unique<OneDnnBf16Product>(n, k);
  ASSIGN_OR_RETURN(bool packed, product->Init(w));
  if (!packed) return std::unique_ptr<Bf16PackedProduct>();
  return std::unique_ptr<Bf16PackedProduct>(std::move(product));
}

}  // namespace attune::quantized
