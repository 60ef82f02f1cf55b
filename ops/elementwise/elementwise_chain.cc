#include "ops/elementwise/elementwise_chain.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "ops/common/parallel.h"
#include "ops/elementwise/vector_math.h"

namespace attune::elementwise {
namespace {

// Elements per block: a few steps' buffers of it stay in L1.
constexpr int64_t kBlock = 512;

enum class StepOp { kAdd, kSub, kMul, kDiv, kNeg, kAbs, kSqrt, kReciprocal, kRelu, kExp, kLog, kTanh, kSigmoid, kErf };

struct Step {
  StepOp op;
  int a = -1, b = -1;  // operand references, as the `operands` attribute has them
};

struct Program {
  std::vector<Step> steps;
  std::vector<bool> scalar;  // per input
};

// Where an operand's elements for the current block are: a pointer and
// whether it is one value for all of them.
struct Operand {
  const float* data;
  bool broadcast;
};

void RunStep(const Step& s, const Operand& a, const Operand& b, float* out, int64_t n,
             const VectorMathKernels& vector) {
  auto binary = [&](auto fn) {
    if (a.broadcast) {
      const float av = a.data[0];
      for (int64_t i = 0; i < n; ++i) out[i] = fn(av, b.data[i]);
    } else if (b.broadcast) {
      const float bv = b.data[0];
      for (int64_t i = 0; i < n; ++i) out[i] = fn(a.data[i], bv);
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = fn(a.data[i], b.data[i]);
    }
  };
  auto unary = [&](auto fn) {
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a.data[a.broadcast ? 0 : i]);
  };
  auto vector_unary = [&](VectorOp op) {
    if (a.broadcast) {
      std::fill(out, out + n, a.data[0]);
      vector.unary[static_cast<int>(op)](out, out, n);
    } else {
      vector.unary[static_cast<int>(op)](a.data, out, n);
    }
  };
  switch (s.op) {
    case StepOp::kAdd: return binary([](float x, float y) { return x + y; });
    case StepOp::kSub: return binary([](float x, float y) { return x - y; });
    case StepOp::kMul: return binary([](float x, float y) { return x * y; });
    case StepOp::kDiv: return binary([](float x, float y) { return x / y; });
    case StepOp::kNeg: return unary([](float x) { return -x; });
    case StepOp::kAbs: return unary([](float x) { return std::fabs(x); });
    case StepOp::kSqrt: return unary([](float x) { return std::sqrt(x); });
    case StepOp::kReciprocal: return unary([](float x) { return 1.0f / x; });
    case StepOp::kRelu: return unary([](float x) { return x < 0.0f ? 0.0f : x; });  // NaN stays NaN
    case StepOp::kExp: return vector_unary(VectorOp::kExp);
    case StepOp::kLog: return vector_unary(VectorOp::kLog);
    case StepOp::kTanh: return vector_unary(VectorOp::kTanh);
    case StepOp::kSigmoid: return vector_unary(VectorOp::kSigmoid);
    case StepOp::kErf: return vector_unary(VectorOp::kErf);
  }
}

class ElementwiseChain final : public Kernel {
 public:
  ElementwiseChain(std::string label, Program program) : label_(std::move(label)), program_(std::move(program)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const int inputs = static_cast<int>(program_.scalar.size());
    const std::vector<int64_t>* shape = nullptr;
    for (int i = 0; i < inputs; ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", i, " is missing"));
      if (t->type() != ElementType::kFloat32)
        return absl::InvalidArgumentError(
            absl::StrCat(label_, ": input ", i, " is ", ElementTypeName(t->type()), ", the chain takes float32"));
      if (program_.scalar[i]) {
        if (t->num_elements() != 1)
          return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", i, " ", ShapeToString(t->shape()),
                                                         " must hold one element"));
      } else if (shape == nullptr) {
        shape = &t->shape();
      } else if (t->shape() != *shape) {
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", i, " ", ShapeToString(t->shape()),
                                                       " must have the shape of the others, ",
                                                       ShapeToString(*shape)));
      }
    }
    for (int i = 0; i < inputs; ++i)  // a one-element input of higher rank would broadcast the output
      if (program_.scalar[i] && ctx.input(i)->rank() > static_cast<int64_t>(shape->size()))
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", i, " ",
                                                       ShapeToString(ctx.input(i)->shape()),
                                                       " has more dims than the output ", ShapeToString(*shape)));
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, *shape));
    const int64_t total = y->num_elements();
    const VectorMathKernels& vector = VectorMathKernelsFor(ActiveIsa());
    const int64_t blocks = (total + kBlock - 1) / kBlock;
    const int64_t steps = static_cast<int64_t>(program_.steps.size());
    ParallelForRange(blocks, std::max<int64_t>(1, kCostlyOpGrain / kBlock), ctx.threads(),
                     [&](int64_t first, int64_t last) {
                       // The steps' results for one block; the last step writes y.
                       std::vector<float> results(static_cast<size_t>(std::max<int64_t>(steps - 1, 0) * kBlock));
                       for (int64_t blk = first; blk < last; ++blk) {
                         const int64_t begin = blk * kBlock, n = std::min(kBlock, total - begin);
                         auto operand = [&](int ref) -> Operand {
                           if (ref < 0) return {nullptr, true};
                           if (ref < inputs) {
                             const float* data = ctx.input(ref)->data<float>();
                             return program_.scalar[ref] ? Operand{data, true} : Operand{data + begin, false};
                           }
                           return {results.data() + (ref - inputs) * kBlock, false};
                         };
                         for (int64_t j = 0; j < steps; ++j) {
                           const Step& s = program_.steps[j];
                           float* out = j + 1 == steps ? y->data<float>() + begin : results.data() + j * kBlock;
                           RunStep(s, operand(s.a), operand(s.b), out, n, vector);
                         }
                       }
                     });
    return absl::OkStatus();
  }

 private:
  std::string label_;
  Program program_;
};

absl::StatusOr<Program> ReadProgram(const std::string& label, const KernelInfo& info) {
  Program p;
  auto ops_attr = info.attrs().GetStrings("ops");
  auto operands_attr = info.attrs().GetInts("operands");
  auto scalar_attr = info.attrs().GetInts("scalar");
  for (const absl::Status& s : {ops_attr.status(), operands_attr.status(), scalar_attr.status()})
    if (!s.ok()) return Annotate(s, label);
  const std::vector<std::string>& ops = *ops_attr;
  const std::vector<int64_t>& operands = *operands_attr;
  const std::vector<int64_t>& scalar = *scalar_attr;
  const int inputs = info.num_inputs();
  if (ops.empty() || static_cast<int>(ops.size()) > kMaxChainSteps)
    return absl::InvalidArgumentError(absl::StrCat(label, ": has ", ops.size(), " steps, 1 to ", kMaxChainSteps,
                                                   " are allowed"));
  if (inputs < 1 || inputs > kMaxChainInputs || static_cast<int>(scalar.size()) != inputs)
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs 1 to ", kMaxChainInputs,
                                                   " inputs and one `scalar` entry per input, got ", inputs, " and ",
                                                   scalar.size()));
  if (operands.size() != 2 * ops.size())
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs two operands per step, got ", operands.size(),
                                                   " for ", ops.size(), " steps"));
  bool full_input = false;
  for (int i = 0; i < inputs; ++i) {
    if (!info.input_present[i]) return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " is missing"));
    if (scalar[i] != 0 && scalar[i] != 1)
      return absl::InvalidArgumentError(absl::StrCat(label, ": scalar entries are 0 or 1, got ", scalar[i]));
    p.scalar.push_back(scalar[i] == 1);
    full_input |= scalar[i] == 0;
  }
  if (!full_input) return absl::InvalidArgumentError(absl::StrCat(label, ": needs an input of the output's shape"));
  for (size_t j = 0; j < ops.size(); ++j) {
    const auto it = std::find(kChainOps.begin(), kChainOps.end(), ops[j]);
    if (it == kChainOps.end())
      return absl::InvalidArgumentError(absl::StrCat(label, ": step ", j, " op ", QuoteName(ops[j]),
                                                     " is not one a chain runs"));
    Step s;
    s.op = static_cast<StepOp>(it - kChainOps.begin());
    s.a = static_cast<int>(operands[2 * j]);
    s.b = static_cast<int>(operands[2 * j + 1]);
    const bool binary = it - kChainOps.begin() < kChainBinaryOps;
    const int64_t limit = inputs + static_cast<int64_t>(j);  // only inputs and earlier steps
    auto valid = [&](int64_t ref) { return ref >= 0 && ref < limit; };
    if (!valid(operands[2 * j]) || (binary ? !valid(operands[2 * j + 1]) : operands[2 * j + 1] != -1))
      return absl::InvalidArgumentError(absl::StrCat(label, ": step ", j, " (", ops[j], ") has operands ",
                                                     operands[2 * j], ", ", operands[2 * j + 1],
                                                     ": each must be an input or an earlier step"));
    p.steps.push_back(s);
  }
  return p;
}

}  // namespace

KernelFactory ElementwiseChainKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    std::string label = absl::StrCat("ElementwiseChain ", QuoteName(info.node_name));
    ASSIGN_OR_RETURN(Program program, ReadProgram(label, info));
    return std::make_unique<ElementwiseChain>(std::move(label), std::move(program));
  };
}

}  // namespace attune::elementwise
