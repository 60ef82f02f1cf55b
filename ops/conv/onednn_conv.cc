#include "ops/conv/onednn_conv.h"

#include <omp.h>

#include <climits>
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

namespace attune {
namespace {

using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;

// Primitives kept per node: one per input geometry and team size (a server
// sees a few audio lengths or image sizes), least recently used out first.
constexpr size_t kPrimitivesPerNode = 16;

// A created primitive, or a geometry oneDNN declined (conv empty).
struct Primitive {
  std::optional<dnnl::convolution_forward> conv;
  memory::desc src, weights, bias, dst, scratchpad;
};

Tag DataTag(int spatial) {
  switch (spatial) {
    case 1: return Tag::ncw;
    case 2: return Tag::nchw;
    default: return Tag::ncdhw;
  }
}

Tag WeightsTag(int spatial, bool grouped) {
  switch (spatial) {
    case 1: return grouped ? Tag::goiw : Tag::oiw;
    case 2: return grouped ? Tag::goihw : Tag::oihw;
    default: return grouped ? Tag::goidhw : Tag::oidhw;
  }
}

std::vector<int64_t> KeyOf(const ConvGeometry& g, bool bias) {
  std::vector<int64_t> key{OneDnnTeamSize(), bias, g.batch, g.in_channels, g.out_channels, g.group};
  for (int i = 0; i < g.spatial_rank(); ++i)
    key.insert(key.end(), {g.input[i], g.kernel[i], g.strides[i], g.dilations[i], g.pad_begin[i], g.pad_end[i]});
  return key;
}

Primitive Create(const ConvGeometry& g, bool bias) {
  const int spatial = g.spatial_rank();
  const bool grouped = g.group > 1;
  Dims src_dims{g.batch, g.in_channels}, dst_dims{g.batch, g.out_channels};
  Dims weight_dims = grouped ? Dims{g.group, g.out_channels_per_group(), g.in_channels_per_group()}
                             : Dims{g.out_channels, g.in_channels};
  Dims strides, dilates, pad_l, pad_r;
  for (int i = 0; i < spatial; ++i) {
    src_dims.push_back(g.input[i]);
    dst_dims.push_back(g.output[i]);
    weight_dims.push_back(g.kernel[i]);
    strides.push_back(g.strides[i]);
    dilates.push_back(g.dilations[i] - 1);  // oneDNN counts the gaps: 0 is no dilation
    pad_l.push_back(g.pad_begin[i]);
    pad_r.push_back(g.pad_end[i]);
  }
  Primitive p;
  p.src = memory::desc(src_dims, memory::data_type::f32, DataTag(spatial));
  p.dst = memory::desc(dst_dims, memory::data_type::f32, DataTag(spatial));
  p.weights = memory::desc(weight_dims, memory::data_type::f32, WeightsTag(spatial, grouped));
  if (bias) p.bias = memory::desc({g.out_channels}, memory::data_type::f32, Tag::x);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  // A zero bias descriptor (no bias) makes oneDNN leave the bias out.
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::convolution_direct, p.src, p.weights, p.bias, p.dst,
                                             strides, dilates, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, OneDnnCpuEngine());
  p.conv.emplace(pd);
  p.scratchpad = pd.scratchpad_desc();
  return p;
}

}  // namespace

struct OneDnnConv::Impl {
  mutable LruCache<std::vector<int64_t>, Primitive> primitives{kPrimitivesPerNode};
};

OneDnnConv::OneDnnConv() : impl_(std::make_unique<Impl>()) {}
OneDnnConv::~OneDnnConv() = default;
size_t OneDnnConv::cached() const { return impl_->primitives.size(); }

bool OneDnnConv::Takes(const ConvGeometry& g) {
  if (g.batch < 1 || g.in_channels < 1 || g.out_channels < 1) return false;
  // Products that overflow are too large anyway (X may be empty whatever its N and C are).
  int64_t x = 0, y = 0, w = 0;
  if (__builtin_mul_overflow(g.batch, g.in_channels, &x) || __builtin_mul_overflow(g.batch, g.out_channels, &y) ||
      __builtin_mul_overflow(g.out_channels, g.in_channels_per_group(), &w))
    return false;
  for (int i = 0; i < g.spatial_rank(); ++i) {
    if (g.output[i] < 1) return false;
    if (__builtin_mul_overflow(x, g.input[i], &x) || __builtin_mul_overflow(y, g.output[i], &y) ||
        __builtin_mul_overflow(w, g.kernel[i], &w))
      return false;
    for (int64_t v : {g.strides[i], g.dilations[i], g.pad_begin[i], g.pad_end[i]})
      if (v > INT_MAX) return false;
  }
  return x > 0 && x <= INT_MAX && y <= INT_MAX && w <= INT_MAX;
}

absl::StatusOr<bool> OneDnnConv::Run(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y,
                                     int threads) const {
  OmpTeamScope team(threads);
  std::shared_ptr<const Primitive> p;
  {
    absl::StatusOr<std::shared_ptr<const Primitive>> made = impl_->primitives.GetOrCreate(
        KeyOf(g, b != nullptr), [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
          try {
            return std::make_shared<const Primitive>(Create(g, b != nullptr));
          } catch (const dnnl::error& e) {
            // No implementation (or a geometry oneDNN's checks refuse): the
            // reference loop runs it, and the refusal is cached too.
            if (e.status == dnnl_unimplemented || e.status == dnnl_invalid_arguments)
              return std::make_shared<const Primitive>();
            return FromDnnlError("convolution setup", e);
          }
        });
    if (!made.ok()) return made.status();
    p = *std::move(made);
  }
  if (!p->conv) return false;
  try {
    const dnnl::engine& engine = OneDnnCpuEngine();
    // A user scratchpad from the process-wide pool, for this call only, so
    // that concurrent runs never share oneDNN's own scratch memory.
    const size_t scratch_bytes = p->scratchpad.get_size();
    PooledBuffer scratch(scratch_bytes > 0 ? scratch_bytes : 1);
    if (scratch.data() == nullptr) return absl::ResourceExhaustedError("oneDNN convolution: out of memory for scratch");
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, memory(p->src, engine, const_cast<float*>(x))},
        {DNNL_ARG_WEIGHTS, memory(p->weights, engine, const_cast<float*>(w))},
        {DNNL_ARG_DST, memory(p->dst, engine, y)}};
    if (b != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p->bias, engine, const_cast<float*>(b)));
    if (scratch_bytes > 0) args.emplace(DNNL_ARG_SCRATCHPAD, memory(p->scratchpad, engine, scratch.data()));
    ExecuteOneDnn(*p->conv, args);
  } catch (const dnnl::error& e) {
    return FromDnnlError("convolution", e);
  }
  return true;
}

}  // namespace attune
