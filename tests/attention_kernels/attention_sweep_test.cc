// Every attention implementation this CPU can run (each ISA variant of the
// flash kernels, with our micro-kernels and with oneDNN sgemm tiles, each
// query-block size, packed and in-place K/V, the decode path, and the oneDNN
// primitive path) against the reference, over the cases of
// attention_cases.h. Variants the CPU lacks are skipped.
//
// Tolerance: max abs error 1e-4 (outputs are O(1)). Measured max abs errors
// are printed per test (grep "max_abs_err") and summarised in
// ops/attention/kernels/README.md.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/attention/kernels/attention_reference.h"
#include "ops/attention/kernels/flash_attention.h"
#include "ops/common/cpu_features.h"
#include "tests/attention_kernels/attention_cases.h"

namespace attune::attention::testing {
namespace {

constexpr double kTolerance = 1e-4;

enum class Path { kFlash, kOneDnnPrimitives };

struct Variant {
  std::string name;
  Path path = Path::kFlash;
  Isa isa = Isa::kGeneric;
  FlashOverrides overrides;
  bool runs_heavy = false;  // also on the long-sequence cases
  int threads = 2;
};

std::vector<Variant> AllVariants() {
  std::vector<Variant> variants;
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    const std::string prefix = IsaName(isa);
    Variant v;
    v.isa = isa;
    v.name = prefix + "_auto";
    v.runs_heavy = true;
    variants.push_back(v);
    v.runs_heavy = false;
    v.threads = 1;
    v.name = prefix + "_auto_1thread";
    variants.push_back(v);
    // Block sizes and in-place rows on one thread; auto, packed and decode
    // (which have parallel phases and merges) on two.
    for (int64_t bq : {16, 32, 64}) {
      v.name = prefix + "_bq" + std::to_string(bq);
      v.overrides = FlashOverrides{};
      v.overrides.block_q = bq;
      v.overrides.block_k = bq == 32 ? 96 : 48;  // many key tiles, tails, partial tiles
      v.overrides.path = FlashOverrides::Path::kQueryBlocks;
      variants.push_back(v);
    }
    v.overrides = FlashOverrides{};
    v.overrides.path = FlashOverrides::Path::kQueryBlocks;
    v.overrides.pack = FlashOverrides::Pack::kNever;
    v.name = prefix + "_unpacked";
    variants.push_back(v);
    v.threads = 2;
    v.overrides.pack = FlashOverrides::Pack::kAlways;
    v.name = prefix + "_packed";
    variants.push_back(v);
    v.overrides = FlashOverrides{};
    v.overrides.path = FlashOverrides::Path::kDecode;
    v.name = prefix + "_decode";
    variants.push_back(v);
  }
  Variant onednn;
  onednn.name = "onednn";
  onednn.path = Path::kOneDnnPrimitives;
  onednn.runs_heavy = true;
  variants.push_back(onednn);
  return variants;
}

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> v = AllVariants();
  return v;
}
const std::vector<AttentionCase>& Cases() {
  static const std::vector<AttentionCase> c = AllAttentionCases();
  return c;
}

/// Runs `variant` on case `index`; the max abs error against `expected`,
/// or nullopt when the variant does not apply to this CPU or case.
std::optional<double> RunVariant(const Variant& variant, int index, const std::vector<float>& expected) {
  const AttentionCase& c = Cases()[index];
  if (c.heavy && !variant.runs_heavy) return std::nullopt;  // long case: default configurations only
  // The portable variant runs T = 1000 but not the 4096 case (seconds there).
  if (c.shape.q_len > 1000 && variant.path == Path::kFlash && variant.isa == Isa::kGeneric) return std::nullopt;
  if (variant.path == Path::kFlash && !IsaSupported(variant.isa)) return std::nullopt;

  BuiltCase built = BuildCase(c, 1000u + index, variant.threads);
  absl::Status status;
  if (variant.path == Path::kFlash) {
    SetForcedIsa(variant.isa);
    SetFlashOverrides(variant.overrides);
    EXPECT_TRUE(ValidateAttentionArgs(built.args).ok());
    status = RunFlashAttention(built.args);
    SetFlashOverrides(FlashOverrides{});
    SetForcedIsa(std::nullopt);
  } else {
    status = RunAttention(built.args, AttentionBackend::kOneDnn);
  }
  EXPECT_TRUE(status.ok()) << status;
  const std::vector<float>& actual = built.problem->y_buffer();
  EXPECT_EQ(expected.size(), actual.size());
  double max_err = 0.0;
  size_t worst = 0;
  for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
    if (std::isnan(actual[i]) && std::isnan(expected[i])) continue;  // a NaN row where NaN is asked for
    const double err = std::fabs(static_cast<double>(actual[i]) - expected[i]);
    if (!(err <= max_err)) {  // NaN counts as worst
      max_err = std::isnan(err) ? INFINITY : err;
      worst = i;
    }
  }
  EXPECT_LE(max_err, kTolerance) << "at flat index " << worst << ": expected " << expected[worst] << ", got "
                                 << actual[worst];
  return max_err;
}

// One test per case (the reference is computed once per process); every
// variant inside, named in the failure messages.
class AttentionSweep : public ::testing::TestWithParam<int> {};

TEST_P(AttentionSweep, EveryPathMatchesReference) {
  const int index = GetParam();
  BuiltCase reference = BuildCase(Cases()[index], 1000u + index, 2);
  RunAttentionReference(reference.args);
  const std::vector<float>& expected = reference.problem->y_buffer();
  int ran = 0;
  for (const Variant& variant : Variants()) {
    SCOPED_TRACE(variant.name);
    const std::optional<double> err = RunVariant(variant, index, expected);
    if (!err) continue;
    ++ran;
    std::printf("max_abs_err %-22s %-34s %.3g\n", variant.name.c_str(), Cases()[index].name.c_str(), *err);
  }
  EXPECT_GT(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(AllCases, AttentionSweep, ::testing::Range(0, static_cast<int>(Cases().size())),
                         [](const ::testing::TestParamInfo<int>& info) { return Cases()[info.param].name; });

}  // namespace
}  // namespace attune::attention::testing
