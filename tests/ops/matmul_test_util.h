// Helpers shared by the matmul and norm kernel tests: deterministic data,
// tensor conversion, and running one prepared kernel from several threads.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/common/status_macros.h"
#include "ops/registry.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {

/// Deterministic values in [-1, 1) (a 64-bit LCG), reproducible across runs.
inline std::vector<double> RandomValues(int64_t count, uint64_t seed) {
  std::vector<double> v(count);
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& x : v) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  }
  return v;
}

inline int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// A tensor of `type` holding `values` (rounded / truncated as the type requires).
inline Tensor MakeTensor(ElementType type, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor t = *Tensor::Create(type, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const double v = values[i];
    switch (type) {
      case ElementType::kFloat32: t.data<float>()[i] = static_cast<float>(v); break;
      case ElementType::kFloat64: t.data<double>()[i] = v; break;
      case ElementType::kFloat16: t.data<Float16>()[i] = FloatToHalf(static_cast<float>(v)); break;
      case ElementType::kBFloat16: t.data<BFloat16>()[i] = FloatToBFloat16(static_cast<float>(v)); break;
      case ElementType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case ElementType::kInt64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case ElementType::kUint32: t.data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
      case ElementType::kUint64: t.data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
      case ElementType::kInt8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      default: break;
    }
  }
  return t;
}

/// The values a tensor holds, as doubles.
inline std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.type()) {
      case ElementType::kFloat32: v[i] = t.data<float>()[i]; break;
      case ElementType::kFloat64: v[i] = t.data<double>()[i]; break;
      case ElementType::kFloat16: v[i] = HalfToFloat(t.data<Float16>()[i]); break;
      case ElementType::kBFloat16: v[i] = BFloat16ToFloat(t.data<BFloat16>()[i]); break;
      case ElementType::kInt32: v[i] = t.data<int32_t>()[i]; break;
      case ElementType::kInt64: v[i] = static_cast<double>(t.data<int64_t>()[i]); break;
      case ElementType::kUint32: v[i] = t.data<uint32_t>()[i]; break;
      case ElementType::kUint64: v[i] = static_cast<double>(t.data<uint64_t>()[i]); break;
      default: v[i] = NAN; break;
    }
  }
  return v;
}

/// Values rounded the way `type` stores them, so a reference sees exactly
/// what the kernel sees.
inline std::vector<double> Quantized(ElementType type, const std::vector<int64_t>& shape,
                                     const std::vector<double>& values) {
  return ToDoubles(MakeTensor(type, shape, values));
}

/// Random small integers in [-range, range] as doubles (exact in every type).
inline std::vector<double> RandomIntegers(int64_t count, uint64_t seed, int range) {
  std::vector<double> v = RandomValues(count, seed);
  for (double& x : v) x = std::round(x * range);
  return v;
}

/// Prepares the kernel of `call` once, then runs it `iterations` times from
/// each of `threads` std::threads at the same time. Returns every thread's
/// outputs of its last iteration, or the first error.
inline absl::StatusOr<std::vector<std::vector<Tensor>>> RunConcurrently(const KernelCall& call, int threads,
                                                                        int iterations) {
  ASSIGN_OR_RETURN(const KernelRegistry::Entry* entry,
                   DefaultKernelRegistry().Find(call.domain, call.op_type, call.opset));
  KernelInfo info;
  info.node_name = "concurrent_node";
  info.op_type = call.op_type;
  info.domain = call.domain;
  info.opset = call.opset;
  info.attributes = &call.attributes;
  info.num_outputs = call.num_outputs;
  info.options = &call.options;
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    const bool present = !t.empty();
    bool constant = false;
    for (int c : call.constant_inputs) constant |= c == static_cast<int>(i);
    info.input_present.push_back(present);
    info.constant_inputs.push_back(present && constant ? &t : nullptr);
    info.input_types.push_back(present ? std::optional<ElementType>(t.type()) : std::nullopt);
    inputs.push_back(present ? &t : nullptr);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, entry->factory(info));
  std::vector<std::vector<Tensor>> outputs(threads, std::vector<Tensor>(call.num_outputs));
  std::vector<absl::Status> statuses(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int it = 0; it < iterations && statuses[t].ok(); ++it) {
        std::vector<Tensor> out(call.num_outputs);
        KernelContext ctx(inputs, &out, std::vector<bool>(call.num_outputs, true), &call.options);
        statuses[t] = kernel->Run(ctx);
        outputs[t] = std::move(out);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  for (const absl::Status& s : statuses) RETURN_IF_ERROR(s);
  return outputs;
}

}  // namespace attune::testing
