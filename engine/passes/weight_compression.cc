// Compression of float weights at load (SessionOptions::weights, `attune
// quantize`): every matrix product whose B is a constant becomes
//   int8 / int4: a com.microsoft.MatMulNBits over B quantized blockwise along
//                K, as ONNX Runtime's MatMulNBitsQuantizer writes it
//                (ops/quantized/nbits_quantize.h);
//   bf16:        an attune.HalfWeightMatMul over B rounded to bfloat16, A
//                rounded too (accuracy_level 3) unless accuracy_level is 1.
// Without compression, a float16 / bfloat16 B behind a Cast to float32 still
// becomes an attune.HalfWeightMatMul over B as it is (the widening is exact),
// so no float32 copy of it is made at run time.
// Products it takes:
//   MatMul(a, B)                     B constant [K, N]
//   MatMul(a, Transpose(B))          B constant [N, K] (a tied lm_head)
//   MatMul(a, Cast(B, to=float))     B float16 or bfloat16
//   Gemm(a, B (, c))                 transA 0, alpha 1, beta 1, c a row of N
// and a bias Add of a constant row after a MatMul becomes the op's bias.
// In a whole-float16 graph (float16 A and B, as onnxconverter-common and
// Optimum write them) the same products over a float16 B become
//   Cast(a, to=float) · HalfWeightMatMul · Cast(to=float16)
// with a float16 bias widened to float32: the sums run in float32 and the
// result is rounded to float16 once (a sum beyond 65504 gives ±inf, as the
// float16 product would), where the float16 MatMul + Add rounded twice.
// The float B is left without uses (dead code drops it unless an embedding
// Gather still reads it). Gather, attention's own products and products
// with a computed B stay as they are.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/ir/file_constant.h"
#include "core/schema/half_weight_matmul.h"
#include "core/schema/quantized_matmul.h"
#include "engine/passes/passes.h"
#include "ops/quantized/nbits_quantize.h"

namespace attune {
namespace {

bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}

// B's constant and how W[n, k] is laid out in it: a tensor, or bytes left in
// the model file (core/ir/file_constant.h).
struct ConstantWeights {
  const void* data = nullptr;
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;
  const FileConstant* in_file = nullptr;  // set for bytes in the file
  bool n_major = false;  // [N, K] (transposed) rather than [K, N]
  Value* value = nullptr;  // the constant itself
};

std::optional<ConstantWeights> RankTwoFloatConstant(const Value* v, bool n_major) {
  if (v == nullptr) return std::nullopt;
  ConstantWeights w;
  w.n_major = n_major;
  w.value = const_cast<Value*>(v);
  if (const Tensor* t = v->constant()) {
    w.data = t->raw_data();
    w.type = t->type();
    w.shape = t->shape();
  } else if (auto* in_file = dynamic_cast<const FileConstant*>(v->constant_holder().get())) {
    w.data = in_file->bytes();
    w.type = in_file->type();
    w.shape = in_file->shape();
    w.in_file = in_file;
  } else {
    return std::nullopt;
  }
  if (w.shape.size() != 2 || !IsFloatType(w.type) || w.shape[0] == 0 || w.shape[1] == 0) return std::nullopt;
  return w;
}

// B of a MatMul: a constant, or a constant behind a Transpose of its two axes or a Cast to float.
std::optional<ConstantWeights> MatMulWeights(const Value* b) {
  if (b == nullptr) return std::nullopt;
  if (b->is_constant()) return RankTwoFloatConstant(b, false);
  const Node* p = b->producer();
  if (p == nullptr || !p->domain().empty() || p->num_inputs() != 1) return std::nullopt;
  if (p->op_type() == "Transpose") {
    auto perm = p->attributes().GetInts("perm", {1, 0});
    if (!perm.ok() || *perm != std::vector<int64_t>{1, 0}) return std::nullopt;
    return RankTwoFloatConstant(p->input(0), true);
  }
  if (p->op_type() == "Cast") {
    auto to = p->attributes().GetInt("to");
    if (!to.ok() || *to != static_cast<int64_t>(ElementType::kFloat32)) return std::nullopt;
    return RankTwoFloatConstant(p->input(0), false);
  }
  return std::nullopt;
}

// A constant row of N elements ([N], [1, N], ...) of the product's type, or null.
const Value* BiasRow(const Value* v, int64_t n, ElementType type) {
  if (v == nullptr || v->constant() == nullptr) return nullptr;
  const Tensor* t = v->constant();
  if (t->type() != type || t->num_elements() != n || t->rank() < 1 || t->shape().back() != n)
    return nullptr;
  return v;
}

class WeightCompressionPass final : public Pass {
 public:
  explicit WeightCompressionPass(const WeightCompressionOptions& options) : options_(options) {}
  std::string_view name() const override { return "weight_compression"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    // Quantization at load uses the run's threads (all cores unless the session says otherwise).
    threads_ = context.exec_options.threads > 0 ? context.exec_options.threads
                                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // The products first: a rewrite replaces a bias Add, which a walk over
    // every node would visit afterwards.
    std::vector<Node*> products;
    for (Node* node : graph.nodes())
      if (node->domain().empty() && (node->op_type() == "MatMul" || node->op_type() == "Gemm"))
        products.push_back(node);
    bool changed = false;
    for (Node* node : products) {
      if (node->op_type() == "MatMul" && node->num_inputs() == 2) {
        ASSIGN_OR_RETURN(bool done, CompressMatMul(graph, context, node));
        changed |= done;
      } else if (node->op_type() == "Gemm") {
        ASSIGN_OR_RETURN(bool done, CompressGemm(graph, context, node));
        changed |= done;
      }
    }
    if (changed && graph.OpsetFor(qmatmul::kDomain) == 0) graph.SetOpset(qmatmul::kDomain, 1);
    if (changed && graph.OpsetFor(halfw::kDomain) == 0) graph.SetOpset(halfw::kDomain, 1);
    return changed;
  }

 private:
  absl::StatusOr<bool> CompressMatMul(Graph& graph, PassContext& context, Node* node) {
    Value* a = node->input(0);
    const std::optional<ConstantWeights> w = MatMulWeights(node->input(1));
    if (!w || a == nullptr || !TakesActivations(a->type(), *w)) return false;
    const int64_t n = w->n_major ? w->shape[0] : w->shape[1];
    // A bias row added to the product alone becomes the op's bias.
    Node* product = node;
    const Value* bias = nullptr;
    const Value* y = node->output(0);
    if (y->uses().size() == 1 && !y->is_graph_output() && y->shape().has_value()) {
      Node* add = y->uses()[0].node;
      if (add->op_type() == "Add" && add->domain().empty() && add->num_inputs() == 2 &&
          add->output(0)->shape() == y->shape()) {
        bias = BiasRow(add->input(add->input(0) == y ? 1 : 0), n, a->type());
        if (bias != nullptr && bias->constant()->rank() > static_cast<int64_t>(y->shape()->size())) bias = nullptr;
        if (bias != nullptr) product = add;
      }
    }
    if (Skipped(context, *w, *node, *product)) return false;
    const std::string label = node->Describe();
    const bool bias_taken = product != node;
    if (a->type() == ElementType::kFloat16) std::tie(product, a) = BetweenCasts(graph, product, a);
    RETURN_IF_ERROR(Replace(graph, product, a, *w, const_cast<Value*>(bias), label));
    if (bias_taken) RETURN_IF_ERROR(graph.RemoveNode(node));
    return true;
  }

  absl::StatusOr<bool> CompressGemm(Graph& graph, PassContext& context, Node* node) {
    const Attributes& attrs = node->attributes();
    Value* a = node->input(0);
    auto trans_a = attrs.GetInt("transA", 0);
    auto trans_b = attrs.GetInt("transB", 0);
    auto alpha = attrs.GetFloat("alpha", 1.0f);
    auto beta = attrs.GetFloat("beta", 1.0f);
    if (!trans_a.ok() || !trans_b.ok() || !alpha.ok() || !beta.ok()) return false;
    if (*trans_a != 0 || *alpha != 1.0f || a == nullptr) return false;
    const std::optional<ConstantWeights> w = RankTwoFloatConstant(node->input(1), *trans_b != 0);
    if (!w || !TakesActivations(a->type(), *w)) return false;
    const int64_t n = w->n_major ? w->shape[0] : w->shape[1];
    Value* c = node->input(2);
    const Value* bias = c == nullptr ? nullptr : BiasRow(c, n, a->type());
    if (c != nullptr && (bias == nullptr || *beta != 1.0f)) return false;
    if (Skipped(context, *w, *node, *node)) return false;
    const std::string label = node->Describe();
    Node* product = node;
    if (a->type() == ElementType::kFloat16) std::tie(product, a) = BetweenCasts(graph, product, a);
    RETURN_IF_ERROR(Replace(graph, product, a, *w, const_cast<Value*>(bias), label));
    return true;
  }

  // Float32 activations over any float weights, or float16 activations over
  // float16 weights (a whole-float16 graph).
  static bool TakesActivations(ElementType a, const ConstantWeights& w) {
    return a == ElementType::kFloat32 || (a == ElementType::kFloat16 && w.type == ElementType::kFloat16);
  }

  // Makes `at` a Cast of a new float32 value to float16 (its output keeps its
  // name and readers) and returns the node that is to compute that value, on
  // A cast to float32 (a Cast of A already there is shared).
  static std::pair<Node*, Value*> BetweenCasts(Graph& graph, Node* at, Value* a) {
    Value* a32 = nullptr;
    for (const auto& use : a->uses()) {
      const Node* reader = use.node;
      auto to = reader->attributes().GetInt("to");
      if (reader->op_type() == "Cast" && reader->domain().empty() && to.ok() &&
          *to == static_cast<int64_t>(ElementType::kFloat32))
        a32 = reader->output(0);
    }
    const std::string base = at->name().empty() ? std::string("product") : at->name();
    if (a32 == nullptr) {
      a32 = graph.AddValue(absl::StrCat(a->name(), "_float"), ElementType::kFloat32, a->shape());
      Attributes to_float;
      to_float.Set("to", static_cast<int64_t>(ElementType::kFloat32));
      graph.AddNode("Cast", "", graph.UniqueName(absl::StrCat(base, "_a_to_float")), {a}, {a32}, std::move(to_float));
    }
    const Value* y = at->output(0);
    Value* y32 = graph.AddValue(absl::StrCat(y->name(), "_float"), ElementType::kFloat32, y->shape());
    Node* product = graph.AddNode("Identity", "", graph.UniqueName(absl::StrCat(base, "_float")), {a32}, {y32});
    Attributes to_half;
    to_half.Set("to", static_cast<int64_t>(ElementType::kFloat16));
    graph.ReplaceNode(at, "Cast", "", {y32}, std::move(to_half));
    return {product, a32};
  }

  // Whether this product stays as it is: without compression, all but those
  // over 16-bit weights; with it, those writing a graph output when the
  // options keep them (the report says so).
  bool Skipped(PassContext& context, const ConstantWeights& w, const Node& product, const Node& last) const {
    if (options_.format == WeightFormat::kAsIs) return w.type == ElementType::kFloat32;
    if (!options_.keep_output_products || !last.output(0)->is_graph_output()) return false;
    AddRejection(context.report, {product.name(), "weight_compression",
                                  "writes a graph output, and products writing one stay in float (keep_output_products)"});
    return true;
  }

  absl::Status Replace(Graph& graph, Node* at, Value* a, const ConstantWeights& w, Value* bias,
                       const std::string& label) {
    quantized::FloatWeights fw;
    fw.data = w.data;
    fw.type = w.type;
    fw.k = w.n_major ? w.shape[1] : w.shape[0];
    fw.n = w.n_major ? w.shape[0] : w.shape[1];
    fw.k_stride = w.n_major ? 1 : fw.n;
    fw.n_stride = w.n_major ? fw.k : 1;
    // The products take the bias as float32 [N]; a [1, N] row is viewed so,
    // a float16 one widened (exactly).
    const Tensor* given = bias == nullptr ? nullptr : bias->constant();
    if (given != nullptr && (given->rank() != 1 || given->type() != ElementType::kFloat32)) {
      ASSIGN_OR_RETURN(Tensor row, Tensor::Create(ElementType::kFloat32, {fw.n}));
      if (given->type() == ElementType::kFloat16) {
        for (int64_t j = 0; j < fw.n; ++j) row.data<float>()[j] = HalfToFloat(given->data<Float16>()[j]);
      } else {
        std::memcpy(row.raw_data(), given->raw_data(), row.byte_size());
      }
      bias = graph.AddConstant(graph.UniqueName(absl::StrCat(bias->name(), "_row")), std::move(row));
    }
    const absl::Status done = options_.format == WeightFormat::kAsIs || options_.format == WeightFormat::kBf16
                                  ? ReplaceWithHalf(graph, at, a, fw, bias, w)
                                  : ReplaceWithNBits(graph, at, a, fw, bias, label, w.in_file);
    // Bytes read from the file leave the process now; a Gather of the same
    // table (a tied lm_head) brings back only the rows it reads.
    if (w.in_file != nullptr) w.in_file->DropPages();
    return done;
  }

  // W [N, K] in the weights' own 16-bit type, or bfloat16 from float32.
  absl::Status ReplaceWithHalf(Graph& graph, Node* at, Value* a, const quantized::FloatWeights& fw, Value* bias,
                               const ConstantWeights& given) {
    const ElementType type = fw.type == ElementType::kFloat32 ? ElementType::kBFloat16 : fw.type;
    Value* w16 = nullptr;
    // A 16-bit [N, K] tensor (a tied lm_head) is W as it is: no copy.
    if (type == fw.type && given.n_major && given.in_file == nullptr) {
      w16 = given.value;
    } else {
      ASSIGN_OR_RETURN(w16, HalfCopy(graph, at, fw, type));
    }
    std::vector<Value*> inputs = {a, w16};
    if (bias != nullptr) inputs.push_back(bias);
    // A weight file's 16-bit W behind its Cast keeps float32 activations (the
    // Cast is exact); compression to bf16 rounds them too unless the user
    // asks for accuracy_level 1.
    Attributes attrs;
    if (options_.format == WeightFormat::kBf16)
      attrs.Set(halfw::kAccuracyLevel, options_.accuracy_level == 1 ? halfw::kFloat32Activations : halfw::kBf16Activations);
    graph.ReplaceNode(at, halfw::kOpType, halfw::kDomain, std::move(inputs), std::move(attrs));
    return absl::OkStatus();
  }

  // A copy of W as [N, K] in `type`: the weights' own 16 bits, or bfloat16
  // from float32 (rounded to nearest even).
  static absl::StatusOr<Value*> HalfCopy(Graph& graph, const Node* at, const quantized::FloatWeights& fw,
                                         ElementType type) {
    ASSIGN_OR_RETURN(Tensor w, Tensor::CreateUninitialized(type, {fw.n, fw.k}));
    uint16_t* dst = static_cast<uint16_t*>(w.raw_data());
    // In tiles, so that a [K, N] source transposed to [N, K] stays in cache.
    constexpr int64_t kTile = 64;
    for (int64_t n0 = 0; n0 < fw.n; n0 += kTile)
      for (int64_t k0 = 0; k0 < fw.k; k0 += kTile)
        for (int64_t n = n0; n < std::min(fw.n, n0 + kTile); ++n)
          for (int64_t k = k0; k < std::min(fw.k, k0 + kTile); ++k) {
            const int64_t at_src = k * fw.k_stride + n * fw.n_stride;
            dst[n * fw.k + k] = fw.type == ElementType::kFloat32
                                    ? FloatToBFloat16(quantized::LoadWeight<float>(fw.data, at_src)).bits
                                    : quantized::LoadWeight<uint16_t>(fw.data, at_src);
          }
    const std::string base = at->name().empty() ? std::string("weights") : at->name();
    return graph.AddConstant(graph.UniqueName(absl::StrCat(base, "_W16")), std::move(w));
  }

  absl::Status ReplaceWithNBits(Graph& graph, Node* at, Value* a, quantized::FloatWeights fw, Value* bias,
                                const std::string& label, const FileConstant* in_file) {
    // Rows of a transposed weight in the file are contiguous: each slice leaves as soon as it is quantized.
    if (in_file != nullptr && fw.n_stride == fw.k) {
      const int64_t row_bytes = fw.k * static_cast<int64_t>(ElementSize(fw.type));
      fw.rows_done = [in_file, row_bytes](int64_t rows) { in_file->DropPages(0, rows * row_bytes); };
    }
    quantized::NBitsQuantizeOptions q;
    q.bits = options_.format == WeightFormat::kInt8 ? 8 : 4;
    q.block_size = options_.block_size;
    q.symmetric = options_.symmetric;
    ASSIGN_OR_RETURN(quantized::NBitsConstants constants, quantized::QuantizeToNBits(fw, q, label, threads_));
    const std::string base = at->name().empty() ? std::string("weights") : at->name();
    std::vector<Value*> inputs = {a, graph.AddConstant(graph.UniqueName(absl::StrCat(base, "_Q", q.bits)),
                                                       std::move(constants.b)),
                                  graph.AddConstant(graph.UniqueName(absl::StrCat(base, "_scales")),
                                                    std::move(constants.scales))};
    inputs.push_back(q.symmetric ? nullptr
                                 : graph.AddConstant(graph.UniqueName(absl::StrCat(base, "_zero_points")),
                                                     std::move(constants.zero_points)));
    if (bias != nullptr) {
      inputs.push_back(nullptr);  // g_idx
      inputs.push_back(bias);
    } else if (q.symmetric) {
      inputs.pop_back();
    }
    Attributes attrs;
    attrs.Set(qmatmul::kK, fw.k);
    attrs.Set(qmatmul::kN, fw.n);
    attrs.Set(qmatmul::kBits, int64_t{q.bits});
    attrs.Set(qmatmul::kBlockSize, int64_t{q.block_size});
    attrs.Set(qmatmul::kAccuracyLevel, int64_t{options_.accuracy_level});
    graph.ReplaceNode(at, qmatmul::kOpType, qmatmul::kDomain, std::move(inputs), std::move(attrs));
    return absl::OkStatus();
  }

  WeightCompressionOptions options_;
  int threads_ = 1;
};

}  // namespace

std::unique_ptr<Pass> MakeWeightCompressionPass(const WeightCompressionOptions& options) {
  return std::make_unique<WeightCompressionPass>(options);
}

}  // namespace attune
