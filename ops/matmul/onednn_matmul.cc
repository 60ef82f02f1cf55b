#include "ops/matmul/onednn_matmul.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/memory/pooled_buffer.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "ops/common/lru_cache.h"
#include "ops/common/onednn_engine.h"
#include "ops/common/omp_team_scope.h"
#include "ops/common/parallel.h"
#include "ops/matmul/gemm_rows.h"
#include "ops/matmul/gemv_weights.h"

namespace attune {
namespace {

using dnnl::memory;
using Dims = memory::dims;
constexpr int64_t kRuntime = DNNL_RUNTIME_DIM_VAL;
// Rows of the matmul used to ask oneDNN for its preferred weight layout; the
// layout depends on K, N and the ISA, not on the row count (checked for 1..4096).
constexpr int64_t kLayoutProbeRows = 128;
// Cached primitives per kernel / per process before the cache is reset.
// Primitives kept per packed weight (one per row count and team size: a
// server sees many sequence lengths) and for the general products, least
// recently used out first, so a long-running process never rebuilds them all.
constexpr size_t kPrimitivesPerWeight = 64;
constexpr size_t kMaxCachedPrimitives = 256;

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

struct Primitive {
  dnnl::matmul matmul;
  memory::desc scratchpad;
};

void Execute(const Primitive& p, std::unordered_map<int, memory>& args) {
  ExecuteOneDnnWithScratchpad(p.matmul, p.scratchpad, args);
}

// Dense strides of `dims` in row-major order, with the last two swapped when
// `transposed` (the operand is stored as [..., cols, rows]).
Dims DenseStrides(const Dims& dims, bool transposed) {
  const size_t r = dims.size();
  Dims stored = dims;
  if (transposed) std::swap(stored[r - 1], stored[r - 2]);
  Dims stored_strides(r);
  int64_t stride = 1;
  for (size_t i = r; i-- > 0;) {
    stored_strides[i] = stride;
    stride *= stored[i];
  }
  if (transposed) std::swap(stored_strides[r - 1], stored_strides[r - 2]);
  return stored_strides;
}

// The same with every stride that depends on a runtime dim left to run time.
Dims RuntimeStrides(size_t rank, bool transposed) {
  Dims strides(rank, kRuntime);
  strides[transposed ? rank - 2 : rank - 1] = 1;
  return strides;
}

// The packed weights as column panels (gemv_weights.h), when oneDNN chose a
// layout of that family: N blocked outermost, then K blocks, each block rows of
// the panel's columns (AVX-512 picks 16 × 64 blocks). Other layouts return
// nothing and every row count goes through oneDNN.
std::optional<PanelLayout> PanelsOf(const memory::desc& md, int64_t k, int64_t n) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.ndims != 2 || d.offset0 != 0 || d.extra.flags != 0) return std::nullopt;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  PanelLayout layout;
  layout.k = k;
  layout.n = n;
  if (b.inner_nblks == 2 && b.inner_idxs[0] == 0 && b.inner_idxs[1] == 1) {
    layout.block_rows = b.inner_blks[0];
    layout.panel_cols = b.inner_blks[1];
  } else if (b.inner_nblks == 1 && b.inner_idxs[0] == 1) {
    layout.block_rows = 1;
    layout.panel_cols = b.inner_blks[0];
  } else {
    return std::nullopt;
  }
  layout.block_stride = b.strides[0];
  layout.panel_stride = b.strides[1];
  layout.padded = true;
  const int64_t block_floats = layout.block_rows * layout.panel_cols;
  const int64_t blocks = (k + layout.block_rows - 1) / layout.block_rows;
  // Blocks of a panel must not overlap, panels must not overlap, and the
  // padding must cover whole panels (the last panel is read to full width).
  if (layout.block_stride < block_floats || layout.panel_stride < blocks * layout.block_stride ||
      d.padded_dims[0] < blocks * layout.block_rows || d.padded_dims[1] < layout.panels() * layout.panel_cols)
    return std::nullopt;
  return layout;
}

// Plain weights used in place are read by oneDNN's blocked kernels 16 rows
// at a time, straight from the matrix: each row a separate stream, on a
// separate page once rows are far apart, and on cores whose L1 sets repeat
// every 4 KiB rows 2 KiB-aligned crowd one set. Matrices beyond the caches
// ran at a third to two thirds of oneDNN's rate on its packed copy (2048 x
// 5632, 5632 x 2048, 2048 x 2048, LLaMA's 2048 x 32000 head), as did rows
// 4 KiB apart (768 x 3072), where GPT-2's 768 x 2304 ran as fast in place
// (bench/matmul_bench BM_ConstantWeightsLayout). Products of many rows on
// such weights repack them block by block of columns into a cache-sized
// scratch copy in oneDNN's layout, each block read from memory once.
bool ReadSlowlyInPlace(int64_t k, int64_t n) {
  const int64_t row_bytes = n * static_cast<int64_t>(sizeof(float));
  return std::gcd(row_bytes, int64_t{4096}) >= 2048 || k * row_bytes > (int64_t{8} << 20);
}
// Rows of A from which repacking the weights per product pays for itself.
constexpr int64_t kRepackMinRows = 32;
// Bytes of one repacked block of columns: a few MiB, in the caches (at 1 MiB,
// 128 columns at K = 2048, oneDNN ran the narrow products markedly slower).
constexpr int64_t kRepackBlockBytes = int64_t{4} << 20;
constexpr int64_t kRepackColumnStep = 64;
// Rows of B per thread below which one thread repacks a block alone.
constexpr int64_t kRepackRowsGrain = 64;

}  // namespace

// ---------------------------------------------------------------------------
// Packed constant weights.

namespace {

// Weights packed once into oneDNN's layout: shared by the products that read
// them, and the holder of the constant they came from once that is released.
struct PackedWeights final : ConstantHolder {
  int64_t k = 0, n = 0;
  bool transposed = false;  // the constant was stored [N, K]
  bool scaled = false;      // alpha is folded in: the constant cannot be restored exactly
  memory data;              // in the layout oneDNN chose for K x N (its own desc)

  absl::StatusOr<Tensor> Restore() const override {
    if (scaled) return absl::FailedPreconditionError("packed weights with a folded scale cannot be restored");
    ASSIGN_OR_RETURN(Tensor plain, Tensor::CreateUninitialized(ElementType::kFloat32,
                                                               transposed ? std::vector<int64_t>{n, k}
                                                                          : std::vector<int64_t>{k, n}));
    try {
      const memory::desc plain_md({k, n}, memory::data_type::f32, transposed ? Dims{1, k} : Dims{n, 1});
      memory out(plain_md, OneDnnCpuEngine(), plain.data<float>());
      dnnl::stream stream(OneDnnCpuEngine());
      dnnl::reorder(data, out).execute(stream, const_cast<memory&>(data), out);
      stream.wait();
    } catch (const dnnl::error& e) {
      return FromDnnlError("weight unpacking", e);
    }
    return plain;
  }
};

}  // namespace

struct OneDnnConstantMatMul::Impl {
  int64_t k = 0, n = 0;
  memory::desc weights_md;
  memory weights;            // the packed copy, or b itself when in place
  std::shared_ptr<const PackedWeights> packed;  // the packed copy; null when in place
  bool in_place = false;
  std::vector<float> bias;   // empty when there is none
  std::optional<PanelLayout> panels;  // the weights' layout, when the panel GEMV reads it
  mutable LruCache<std::pair<int64_t, int>, Primitive> primitives{kPrimitivesPerWeight};
  // In-place weights oneDNN reads slowly where they are: products of many
  // rows repack them block_cols columns at a time (ReadSlowlyInPlace), with
  // the layouts of a full block and of the last one found at creation.
  struct Block {
    int64_t cols = 0;
    memory::desc packed_md;  // the block in oneDNN's layout
    PanelLayout layout;      // the same, as column panels
    bool padded = false;     // whether the layout holds rows past K or columns past the block
  };
  int64_t block_cols = 0;  // 0: never repacked
  Block full_block, last_block;
  mutable LruCache<std::vector<int64_t>, Primitive> block_primitives{kPrimitivesPerWeight};

  memory::desc SrcDesc(int64_t m) const { return memory::desc({m, k}, memory::data_type::f32, memory::format_tag::ab); }
  memory::desc DstDesc(int64_t m) const { return memory::desc({m, n}, memory::data_type::f32, memory::format_tag::ab); }
  memory::desc BiasDesc() const { return memory::desc({1, n}, memory::data_type::f32, memory::format_tag::ab); }

  dnnl::matmul::primitive_desc MakePd(int64_t m, const memory::desc& weights) const {
    const dnnl::matmul::desc desc = bias.empty() ? dnnl::matmul::desc(SrcDesc(m), weights, DstDesc(m))
                                                 : dnnl::matmul::desc(SrcDesc(m), weights, BiasDesc(), DstDesc(m));
    return dnnl::matmul::primitive_desc(desc, UserScratchpadAttr(), OneDnnCpuEngine());
  }

  absl::StatusOr<std::shared_ptr<const Primitive>> Get(int64_t m) const {
    return primitives.GetOrCreate(std::pair<int64_t, int>(m, OneDnnTeamSize()),
                                  [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
                                    auto pd = MakePd(m, weights_md);
                                    return std::make_shared<const Primitive>(
                                        Primitive{dnnl::matmul(pd), pd.scratchpad_desc()});
                                  });
  }

  // The block of `cols` columns as oneDNN lays it out, when that is column
  // panels (else the weights are only read in place).
  std::optional<Block> BlockOf(int64_t cols) const {
    const memory::desc any({k, cols}, memory::data_type::f32, memory::format_tag::any);
    const memory::desc src({kLayoutProbeRows, k}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc dst({kLayoutProbeRows, cols}, memory::data_type::f32, memory::format_tag::ab);
    const memory::desc packed =
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, any, dst), OneDnnCpuEngine()).weights_desc();
    std::optional<PanelLayout> layout = PanelsOf(packed, k, cols);
    if (!layout) return std::nullopt;
    const bool padded = k % layout->block_rows != 0 || cols % layout->panel_cols != 0 ||
                        layout->block_stride != layout->block_rows * layout->panel_cols;
    return Block{cols, packed, *layout, padded};
  }

  // The product of m rows with one block of `cols` columns, into a dense
  // m x cols block (oneDNN 2.6's blocked kernels take no row stride for C:
  // with one it ran its reference loop).
  absl::StatusOr<std::shared_ptr<const Primitive>> BlockPrimitive(int64_t m, const Block& block, int64_t cols) const {
    return block_primitives.GetOrCreate(
        std::vector<int64_t>{m, cols, OneDnnTeamSize()}, [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
          const memory::desc dst({m, cols}, memory::data_type::f32, memory::format_tag::ab);
          const memory::desc bias_md({1, cols}, memory::data_type::f32, memory::format_tag::ab);
          const dnnl::matmul::desc desc = bias.empty() ? dnnl::matmul::desc(SrcDesc(m), block.packed_md, dst)
                                                       : dnnl::matmul::desc(SrcDesc(m), block.packed_md, bias_md, dst);
          dnnl::matmul::primitive_desc pd(desc, UserScratchpadAttr(), OneDnnCpuEngine());
          return std::make_shared<const Primitive>(Primitive{dnnl::matmul(pd), pd.scratchpad_desc()});
        });
  }

  // c = a · B (+ bias) for in-place B, repacking it a block of columns at a
  // time into one scratch buffer.
  absl::Status RunRepacked(const float* a, int64_t m, float* c, int team) const {
    const dnnl::engine& engine = OneDnnCpuEngine();
    const float* plain = static_cast<const float*>(weights.get_data_handle());
    PooledBuffer scratch(full_block.packed_md.get_size());
    PooledBuffer product(sizeof(float) * m * full_block.cols);
    if (scratch.data() == nullptr || product.data() == nullptr)
      return absl::ResourceExhaustedError("matmul: out of memory for the repacked weights");
    float* block_c = static_cast<float*>(product.data());
    for (int64_t j = 0; j < n; j += block_cols) {
      const Block& block = n - j >= block_cols ? full_block : last_block;
      Repack(block, plain + j, static_cast<float*>(scratch.data()), team);
      ASSIGN_OR_RETURN(std::shared_ptr<const Primitive> p, BlockPrimitive(m, block, block.cols));
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, memory(SrcDesc(m), engine, const_cast<float*>(a))},
          {DNNL_ARG_WEIGHTS, memory(block.packed_md, engine, scratch.data())},
          {DNNL_ARG_DST, memory(memory::desc({m, block.cols}, memory::data_type::f32, memory::format_tag::ab),
                                engine, block_c)}};
      if (!bias.empty())
        args.emplace(DNNL_ARG_BIAS, memory(memory::desc({1, block.cols}, memory::data_type::f32,
                                                        memory::format_tag::ab),
                                           engine, const_cast<float*>(bias.data() + j)));
      Execute(*p, args);
      for (int64_t r = 0; r < m; ++r) std::memcpy(c + r * n + j, block_c + r * block.cols, sizeof(float) * block.cols);
    }
    return absl::OkStatus();
  }

  // Copies the block of B starting at `source` (rows n floats apart) into
  // `packed` laid out as block.layout, each thread its range of rows in
  // address order so that B streams; padding is zero, as oneDNN's layout
  // requires.
  void Repack(const Block& block, const float* source, float* packed, int team) const {
    const PanelLayout& l = block.layout;
    if (block.padded) std::memset(packed, 0, block.packed_md.get_size());
    ParallelForRange(k, kRepackRowsGrain, team, [&](int64_t first, int64_t last) {
      for (int64_t kk = first; kk < last; ++kk) {
        const float* row = source + kk * n;
        float* out = packed + (kk / l.block_rows) * l.block_stride + (kk % l.block_rows) * l.panel_cols;
        for (int64_t p = 0; p < l.panels(); ++p) {
          const int64_t c0 = p * l.panel_cols;
          std::memcpy(out + p * l.panel_stride, row + c0, sizeof(float) * std::min(l.panel_cols, l.n - c0));
        }
      }
    });
  }
};

OneDnnConstantMatMul::OneDnnConstantMatMul(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OneDnnConstantMatMul::~OneDnnConstantMatMul() = default;
int64_t OneDnnConstantMatMul::k() const { return impl_->k; }
int64_t OneDnnConstantMatMul::n() const { return impl_->n; }
int64_t OneDnnConstantMatMul::repack_columns() const { return impl_->block_cols; }
bool OneDnnConstantMatMul::in_place() const { return impl_->in_place; }

absl::StatusOr<std::unique_ptr<OneDnnConstantMatMul>> OneDnnConstantMatMul::Create(const float* b, int64_t k, int64_t n,
                                                                              const Options& options) {
  if (k <= 0 || n <= 0) return absl::InvalidArgumentError("OneDnnConstantMatMul: K and N must be positive");
  auto impl = std::make_unique<Impl>();
  impl->k = k;
  impl->n = n;
  if (options.bias != nullptr) impl->bias.assign(options.bias, options.bias + n);
  try {
    if (options.in_place && !options.transpose_b && options.alpha == 1.0f) {
      impl->in_place = true;
      impl->weights_md = memory::desc({k, n}, memory::data_type::f32, memory::format_tag::ab);
      impl->weights = memory(impl->weights_md, OneDnnCpuEngine(), const_cast<float*>(b));
      if (ReadSlowlyInPlace(k, n)) {
        const int64_t per_block = kRepackBlockBytes / (k * static_cast<int64_t>(sizeof(float)));
        const int64_t cols =
            std::min(n, std::max(kRepackColumnStep, per_block / kRepackColumnStep * kRepackColumnStep));
        std::optional<Impl::Block> full = impl->BlockOf(cols);
        std::optional<Impl::Block> last = n % cols == 0 ? full : impl->BlockOf(n % cols);
        if (full && last) {
          impl->block_cols = cols;
          impl->full_block = *full;
          impl->last_block = *last;
        }
      }
      return std::unique_ptr<OneDnnConstantMatMul>(new OneDnnConstantMatMul(std::move(impl)));
    }
    const memory::desc any({k, n}, memory::data_type::f32, memory::format_tag::any);
    impl->weights_md = impl->MakePd(kLayoutProbeRows, any).weights_desc();
    impl->panels = PanelsOf(impl->weights_md, k, n);

    std::vector<float> scaled;
    const float* source = b;
    if (options.alpha != 1.0f) {
      scaled.assign(b, b + k * n);
      for (float& v : scaled) v *= options.alpha;
      source = scaled.data();
    }
    const memory::desc plain({k, n}, memory::data_type::f32,
                             options.transpose_b ? Dims{1, k} : Dims{n, 1});
    memory source_mem(plain, OneDnnCpuEngine(), const_cast<float*>(source));
    auto packed = std::make_shared<PackedWeights>();
    packed->k = k;
    packed->n = n;
    packed->transposed = options.transpose_b;
    packed->scaled = options.alpha != 1.0f;
    packed->data = memory(impl->weights_md, OneDnnCpuEngine());
    dnnl::stream stream(OneDnnCpuEngine());
    dnnl::reorder(source_mem, packed->data).execute(stream, source_mem, packed->data);
    stream.wait();
    impl->weights = packed->data;
    impl->packed = std::move(packed);
  } catch (const dnnl::error& e) {
    return FromDnnlError("weight packing", e);
  }
  return std::unique_ptr<OneDnnConstantMatMul>(new OneDnnConstantMatMul(std::move(impl)));
}

bool PackSoleReaderWeights() { return !GemmRowsInPlaceAvailable(); }

absl::StatusOr<std::unique_ptr<OneDnnConstantMatMul>> OneDnnConstantMatMul::FromHeld(
    const std::shared_ptr<const ConstantHolder>& held, bool transpose_b, const float* bias) {
  auto packed = std::dynamic_pointer_cast<const PackedWeights>(held);
  if (packed == nullptr || packed->scaled || packed->transposed != transpose_b) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->k = packed->k;
  impl->n = packed->n;
  if (bias != nullptr) impl->bias.assign(bias, bias + packed->n);
  impl->weights_md = packed->data.get_desc();
  impl->panels = PanelsOf(impl->weights_md, packed->k, packed->n);
  impl->weights = packed->data;
  impl->packed = std::move(packed);
  return std::unique_ptr<OneDnnConstantMatMul>(new OneDnnConstantMatMul(std::move(impl)));
}

std::shared_ptr<const ConstantHolder> OneDnnConstantMatMul::holder() const {
  if (impl_->packed == nullptr || impl_->packed->scaled) return nullptr;
  return impl_->packed;
}

absl::Status OneDnnConstantMatMul::Run(const float* a, int64_t m, float* c, int threads) const {
  if (m == 0) return absl::OkStatus();
  // Up to kGemvMaxRowsOfA rows read the weights once through the GEMVs, each
  // row with its bits alone, where the GEMVs are fast at that many rows. On
  // AVX2 machines in-place weights take the row GEMM from 5 rows: its register
  // tile beats the row-major GEMV's sums in L1 there (bench/gemv_bench,
  // ATTUNE_ISA=avx2: GPT-2's weights at 16 rows 92 ms against 67 at 17 through
  // the row GEMM), so rows 5-16 equal the row alone only up to rounding there.
  int64_t gemv_rows = 0;
  if (impl_->panels.has_value())
    gemv_rows = GemvPanelsFastRows(*impl_->panels);
  else if (impl_->in_place)
    gemv_rows = GemmRowsInPlaceAvailable() ? kGemvStreamBoundRows : kGemvMaxRowsOfA;
  if (m <= gemv_rows) {
    const float* weights = static_cast<const float*>(impl_->weights.get_data_handle());
    const float* bias = impl_->bias.empty() ? nullptr : impl_->bias.data();
    const int team = threads > 0 && !omp_in_parallel() ? threads : OneDnnTeamSize();
    if (impl_->in_place)
      GemvRowMajor(weights, impl_->k, impl_->n, a, m, bias, c, team);
    else
      GemvPanels(*impl_->panels, weights, a, m, bias, c, team);
    return absl::OkStatus();
  }
  if (impl_->in_place && GemmRowsInPlaceAvailable()) {
    const float* weights = static_cast<const float*>(impl_->weights.get_data_handle());
    const float* bias = impl_->bias.empty() ? nullptr : impl_->bias.data();
    const int team = threads > 0 && !omp_in_parallel() ? threads : OneDnnTeamSize();
    return GemmRowsInPlace(weights, impl_->k, impl_->n, a, m, bias, c, team);
  }
  OmpTeamScope team(threads);
  try {
    if (impl_->block_cols > 0 && m >= kRepackMinRows) return impl_->RunRepacked(a, m, c, OneDnnTeamSize());
    ASSIGN_OR_RETURN(std::shared_ptr<const Primitive> p, impl_->Get(m));
    const dnnl::engine& engine = OneDnnCpuEngine();
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(impl_->SrcDesc(m), engine, const_cast<float*>(a))},
        {DNNL_ARG_WEIGHTS, impl_->weights},
        {DNNL_ARG_DST, memory(impl_->DstDesc(m), engine, c)}};
    if (!impl_->bias.empty())
      args.emplace(DNNL_ARG_BIAS, memory(impl_->BiasDesc(), engine, const_cast<float*>(impl_->bias.data())));
    Execute(*p, args);
  } catch (const dnnl::error& e) {
    return FromDnnlError("matmul", e);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// General products with runtime M, N, K.

bool OneDnnMatMulSupportsBatchRank(size_t batch_rank) { return batch_rank + 2 <= DNNL_MAX_NDIMS; }

namespace {

absl::StatusOr<std::shared_ptr<const Primitive>> BatchedPrimitive(const MatMulShape& s, bool trans_a, bool trans_b) {
  static auto* cache = new LruCache<std::vector<int64_t>, Primitive>(kMaxCachedPrimitives);
  std::vector<int64_t> key{OneDnnTeamSize(), trans_a, trans_b, static_cast<int64_t>(s.out_batch.size())};
  key.insert(key.end(), s.a_batch.begin(), s.a_batch.end());
  key.insert(key.end(), s.b_batch.begin(), s.b_batch.end());
  return cache->GetOrCreate(key, [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
    const size_t rank = s.out_batch.size() + 2;
    auto with_matrix = [](const std::vector<int64_t>& batch) {
      Dims dims(batch.begin(), batch.end());
      dims.push_back(kRuntime);
      dims.push_back(kRuntime);
      return dims;
    };
    const memory::desc a_md(with_matrix(s.a_batch), memory::data_type::f32, RuntimeStrides(rank, trans_a));
    const memory::desc b_md(with_matrix(s.b_batch), memory::data_type::f32, RuntimeStrides(rank, trans_b));
    const memory::desc c_md(with_matrix(s.out_batch), memory::data_type::f32, RuntimeStrides(rank, false));
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), UserScratchpadAttr(), OneDnnCpuEngine());
    return std::make_shared<const Primitive>(Primitive{dnnl::matmul(pd), pd.scratchpad_desc()});
  });
}

}  // namespace

absl::Status OneDnnMatMul(const MatMulShape& s, const float* a, const float* b, float* c, int threads, bool trans_a,
                          bool trans_b) {
  if (s.m == 0 || s.n == 0 || s.batch_count() == 0) return absl::OkStatus();
  if (s.k == 0) {
    std::fill(c, c + s.batch_count() * s.m * s.n, 0.0f);
    return absl::OkStatus();
  }
  if (!OneDnnMatMulSupportsBatchRank(s.out_batch.size()))
    return absl::UnimplementedError(absl::StrCat("oneDNN matmul takes at most ", DNNL_MAX_NDIMS - 2,
                                                 " batch dims, got ", s.out_batch.size()));
  if (trans_a && !s.out_batch.empty()) return absl::InternalError("OneDnnMatMul: trans_a needs an unbatched A");
  OmpTeamScope team(threads);
  try {
    ASSIGN_OR_RETURN(std::shared_ptr<const Primitive> p, BatchedPrimitive(s, trans_a, trans_b));
    auto concrete = [](const std::vector<int64_t>& batch, int64_t rows, int64_t cols, bool transposed) {
      Dims dims(batch.begin(), batch.end());
      dims.push_back(rows);
      dims.push_back(cols);
      return memory::desc(dims, memory::data_type::f32, DenseStrides(dims, transposed));
    };
    const dnnl::engine& engine = OneDnnCpuEngine();
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(concrete(s.a_batch, s.m, s.k, trans_a), engine, const_cast<float*>(a))},
        {DNNL_ARG_WEIGHTS, memory(concrete(s.b_batch, s.k, s.n, trans_b), engine, const_cast<float*>(b))},
        {DNNL_ARG_DST, memory(concrete(s.out_batch, s.m, s.n, false), engine, c)}};
    Execute(*p, args);
  } catch (const dnnl::error& e) {
    return FromDnnlError("matmul", e);
  }
  return absl::OkStatus();
}

}  // namespace attune
