#include "ops/conv/onednn_conv.h"

#include <omp.h>

#include <bit>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
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

// A created primitive, or a geometry oneDNN declined (conv empty). The
// convolution runs on the layouts oneDNN chose for it (blocked, nChw16c and
// the like, where its direct JIT kernels run: on plain nchw oneDNN 2.6 has
// only its GEMM convolution, 1.5-3x slower, and far slower for depthwise);
// the reorders move X in and Y out of them when they differ from the plain
// layouts ONNX tensors have.
struct Primitive {
  std::optional<dnnl::convolution_forward> conv;
  std::optional<dnnl::reorder> src_in, weights_in, dst_out;
  memory::desc src, weights, bias, dst;           // the plain layouts
  memory::desc conv_src, conv_weights, conv_dst;  // the layouts the convolution reads and writes
  memory::desc scratchpad;
};

std::optional<dnnl::reorder> ReorderIfDiffers(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  const dnnl::engine& engine = OneDnnCpuEngine();
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
}

Tag DataTag(int spatial, bool channels_last) {
  switch (spatial) {
    case 1: return channels_last ? Tag::nwc : Tag::ncw;
    case 2: return channels_last ? Tag::nhwc : Tag::nchw;
    default: return channels_last ? Tag::ndhwc : Tag::ncdhw;
  }
}

// The oneDNN post-op of an activation it applies exactly (ConvEpilogue::OnOneDnn).
void AppendActivation(const ConvEpilogue& e, dnnl::primitive_attr& attr) {
  if (!e.OnOneDnn()) return;
  dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
  float alpha = 0.0f;
  switch (e.activation) {
    case ConvActivation::kLeakyRelu:
      alg = dnnl::algorithm::eltwise_relu;
      alpha = e.alpha;
      break;
    case ConvActivation::kHardSwish: alg = dnnl::algorithm::eltwise_hardswish; break;
    case ConvActivation::kSigmoid: alg = dnnl::algorithm::eltwise_logistic; break;
    case ConvActivation::kTanh: alg = dnnl::algorithm::eltwise_tanh; break;
    default: return;
  }
  dnnl::post_ops ops;
  ops.append_eltwise(1.0f, alg, alpha, 0.0f);
  attr.set_post_ops(ops);
}

Tag WeightsTag(int spatial, bool grouped) {
  switch (spatial) {
    case 1: return grouped ? Tag::goiw : Tag::oiw;
    case 2: return grouped ? Tag::goihw : Tag::oihw;
    default: return grouped ? Tag::goidhw : Tag::oidhw;
  }
}

std::vector<int64_t> KeyOf(const ConvGeometry& g, bool bias, const OneDnnConvOptions& o) {
  const ConvEpilogue& e = o.epilogue;
  const bool post = e.OnOneDnn();
  std::vector<int64_t> key{OneDnnTeamSize(), bias, g.batch, g.in_channels, g.out_channels, g.group,
                           o.x_channels_last, o.y_channels_last, post ? static_cast<int64_t>(e.activation) : 0,
                           post ? static_cast<int64_t>(std::bit_cast<uint32_t>(e.alpha)) : 0};
  for (int i = 0; i < g.spatial_rank(); ++i)
    key.insert(key.end(), {g.input[i], g.kernel[i], g.strides[i], g.dilations[i], g.pad_begin[i], g.pad_end[i]});
  return key;
}

Primitive Create(const ConvGeometry& g, bool bias, const OneDnnConvOptions& o) {
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
  p.src = memory::desc(src_dims, memory::data_type::f32, DataTag(spatial, o.x_channels_last));
  p.dst = memory::desc(dst_dims, memory::data_type::f32, DataTag(spatial, o.y_channels_last));
  p.weights = memory::desc(weight_dims, memory::data_type::f32, WeightsTag(spatial, grouped));
  if (bias) p.bias = memory::desc({g.out_channels}, memory::data_type::f32, Tag::x);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  AppendActivation(o.epilogue, attr);
  // A zero bias descriptor (no bias) makes oneDNN leave the bias out.
  const memory::desc any_src(src_dims, memory::data_type::f32, Tag::any);
  const memory::desc any_dst(dst_dims, memory::data_type::f32, Tag::any);
  const memory::desc any_weights(weight_dims, memory::data_type::f32, Tag::any);
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::convolution_direct, any_src, any_weights, p.bias,
                                             any_dst, strides, dilates, pad_l, pad_r);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, OneDnnCpuEngine());
  p.conv.emplace(pd);
  p.conv_src = pd.src_desc();
  p.conv_weights = pd.weights_desc();
  p.conv_dst = pd.dst_desc();
  p.src_in = ReorderIfDiffers(p.src, p.conv_src);
  p.weights_in = ReorderIfDiffers(p.weights, p.conv_weights);
  p.dst_out = ReorderIfDiffers(p.conv_dst, p.dst);
  p.scratchpad = pd.scratchpad_desc();
  return p;
}

// A buffer for one call, or ResourceExhausted.
absl::StatusOr<std::unique_ptr<PooledBuffer>> CallBuffer(size_t bytes, const char* what) {
  auto buffer = std::make_unique<PooledBuffer>(bytes > 0 ? bytes : 1);
  if (buffer->data() == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat("oneDNN convolution: out of memory for ", what));
  return buffer;
}

}  // namespace

// W in the layout a convolution reads, reordered once from a constant W
// (the same layout serves every geometry that chose it).
struct PackedWeights {
  memory::desc layout;
  const float* from = nullptr;
  std::unique_ptr<PooledBuffer> data;
};

struct OneDnnConv::Impl {
  mutable LruCache<std::vector<int64_t>, Primitive> primitives{kPrimitivesPerNode};
  mutable std::mutex packed_mutex;
  mutable std::vector<std::shared_ptr<const PackedWeights>> packed;  // a few layouts at most

  // The packed form of constant weights `w` for primitive `p`, made on first use.
  absl::StatusOr<std::shared_ptr<const PackedWeights>> Packed(const Primitive& p, const float* w) const {
    std::lock_guard<std::mutex> lock(packed_mutex);
    for (const auto& one : packed)
      if (one->from == w && one->layout == p.conv_weights) return one;
    auto made = std::make_shared<PackedWeights>();
    made->layout = p.conv_weights;
    made->from = w;
    ASSIGN_OR_RETURN(made->data, CallBuffer(p.conv_weights.get_size(), "packed weights"));
    const dnnl::engine& engine = OneDnnCpuEngine();
    dnnl::stream stream(engine);
    p.weights_in->execute(stream, {{DNNL_ARG_FROM, memory(p.weights, engine, const_cast<float*>(w))},
                                   {DNNL_ARG_TO, memory(p.conv_weights, engine, made->data->data())}});
    stream.wait();
    if (packed.size() >= kPrimitivesPerNode) packed.erase(packed.begin());
    packed.push_back(made);
    return std::shared_ptr<const PackedWeights>(std::move(made));
  }
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

absl::StatusOr<bool> OneDnnConv::Run(const ConvGeometry& g, const float* x, const float* w, bool weights_constant,
                                     const float* b, float* y, int threads,
                                     const OneDnnConvOptions& options) const {
  OmpTeamScope team(threads);
  std::shared_ptr<const Primitive> p;
  {
    absl::StatusOr<std::shared_ptr<const Primitive>> made = impl_->primitives.GetOrCreate(
        KeyOf(g, b != nullptr, options), [&]() -> absl::StatusOr<std::shared_ptr<const Primitive>> {
          try {
            return std::make_shared<const Primitive>(Create(g, b != nullptr, options));
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
    // User scratch from the process-wide pool, for this call only, so that
    // concurrent runs never share oneDNN's own scratch memory; so are X and Y
    // in the convolution's layouts when they differ from the plain ones.
    ASSIGN_OR_RETURN(auto scratch, CallBuffer(p->scratchpad.get_size(), "scratch"));
    std::unique_ptr<PooledBuffer> src_buffer, dst_buffer, weights_buffer;
    std::shared_ptr<const PackedWeights> packed;
    void* src = const_cast<float*>(x);
    void* dst = y;
    void* weights = const_cast<float*>(w);
    if (p->src_in) {
      ASSIGN_OR_RETURN(src_buffer, CallBuffer(p->conv_src.get_size(), "the input"));
      src = src_buffer->data();
    }
    if (p->dst_out) {
      ASSIGN_OR_RETURN(dst_buffer, CallBuffer(p->conv_dst.get_size(), "the output"));
      dst = dst_buffer->data();
    }
    if (p->weights_in && weights_constant) {
      ASSIGN_OR_RETURN(packed, impl_->Packed(*p, w));
      weights = packed->data->data();
    } else if (p->weights_in) {
      ASSIGN_OR_RETURN(weights_buffer, CallBuffer(p->conv_weights.get_size(), "the weights"));
      weights = weights_buffer->data();
    }
    // One stream, one team probe, and one end of region for the whole chain.
    ProbeTeamBeforeProduct();
    dnnl::stream stream(engine);
    if (p->src_in)
      p->src_in->execute(stream, {{DNNL_ARG_FROM, memory(p->src, engine, const_cast<float*>(x))},
                                  {DNNL_ARG_TO, memory(p->conv_src, engine, src)}});
    if (weights_buffer)
      p->weights_in->execute(stream, {{DNNL_ARG_FROM, memory(p->weights, engine, const_cast<float*>(w))},
                                      {DNNL_ARG_TO, memory(p->conv_weights, engine, weights)}});
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(p->conv_src, engine, src)},
                                         {DNNL_ARG_WEIGHTS, memory(p->conv_weights, engine, weights)},
                                         {DNNL_ARG_DST, memory(p->conv_dst, engine, dst)}};
    if (b != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p->bias, engine, const_cast<float*>(b)));
    if (p->scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, memory(p->scratchpad, engine, scratch->data()));
    p->conv->execute(stream, args);
    if (p->dst_out)
      p->dst_out->execute(stream, {{DNNL_ARG_FROM, memory(p->conv_dst, engine, dst)},
                                   {DNNL_ARG_TO, memory(p->dst, engine, y)}});
    stream.wait();
    NoteRegionEnd(MonitorNowNs());
  } catch (const dnnl::error& e) {
    return FromDnnlError("convolution", e);
  }
  return true;
}

}  // namespace attune
