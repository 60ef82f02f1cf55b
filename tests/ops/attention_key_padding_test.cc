// attune.MultiHeadAttention's key padding input (input 6) and the lengths
// key_padding_length lets it have: one entry per key, one entry broadcast to
// every key (as ONNX broadcasts a padding of length 1 into the scores), and
// the refusals of every other length, on every backend.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/schema/multi_head_attention.h"
#include "gtest/gtest.h"
#include "tests/common/compare.h"
#include "tests/common/kernel_runner.h"

namespace attune::testing {
namespace {

constexpr int64_t kB = 2, kH = 2, kD = 4, kPast = 3;

Tensor Random(std::vector<int64_t> shape, unsigned seed) {
  Tensor t = *Tensor::Create(ElementType::kFloat32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

Tensor Ints(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  return *Tensor::FromVector<int64_t>(std::move(shape), values);
}

// Causal attention over past kPast + `t` new keys, masked rows "fills" so a
// fully padded batch gives its keys' fills, with `padding` as input 6.
KernelCall Call(int64_t t, const Tensor& padding, const char* length, AttentionBackend backend) {
  KernelCall call;
  call.op_type = mha::kOpType;
  call.domain = mha::kDomain;
  call.opset = 1;
  call.attributes.Set(mha::kNumHeads, kH);
  call.attributes.Set(mha::kCausal, int64_t{1});
  call.attributes.Set(mha::kMaskedRows, std::string("fills"));
  call.attributes.Set(mha::kHiddenFills, std::vector<float>{-1e30f, -2e30f, -3e30f});
  if (length != nullptr) call.attributes.Set(mha::kKeyPaddingLength, std::string(length));
  call.inputs = {Random({kB, kH, t, kD}, 1), Random({kB, kH, t, kD}, 2), Random({kB, kH, t, kD}, 3), Tensor(),
                 Random({kB, kH, kPast, kD}, 4), Random({kB, kH, kPast, kD}, 5), padding};
  call.options.attention_backend = backend;
  return call;
}

constexpr AttentionBackend kBackends[] = {AttentionBackend::kReference, AttentionBackend::kSimd,
                                          AttentionBackend::kOneDnn};

TEST(AttentionKeyPadding, OneEntryBroadcastsToEveryKey) {
  const int64_t t = 2, keys = kPast + t;
  // Batch 0 shows every key, batch 1 none (its rows take the padding's fills).
  const Tensor one = Ints({kB, 1}, {1, 0});
  std::vector<int64_t> repeated;
  for (int64_t b = 0; b < kB; ++b) repeated.insert(repeated.end(), keys, b == 0 ? 1 : 0);
  const Tensor every_key = Ints({kB, keys}, repeated);
  for (AttentionBackend backend : kBackends) {
    auto want = RunKernel(Call(t, every_key, "broadcast", backend));
    auto got = RunKernel(Call(t, one, "broadcast", backend));
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(MaxAbsDifference((*want)[0], (*got)[0]), 0.0);
    auto viewed = RunKernel(Call(t, one, "broadcast_viewed", backend));
    ASSERT_TRUE(viewed.ok()) << viewed.status();
    EXPECT_EQ(MaxAbsDifference((*want)[0], (*viewed)[0]), 0.0);
  }
}

// A mask that hides no key adds zeros to the scores: the kernels run as
// without it, and the result is the same to the bit.
TEST(AttentionKeyPadding, NoKeyHiddenIsTheUnpaddedAttention) {
  const int64_t t = 4, keys = kPast + t;
  const Tensor every_key = Ints({kB, keys}, std::vector<int64_t>(kB * keys, 1));
  for (AttentionBackend backend : kBackends) {
    auto want = RunKernel(Call(t, Tensor(), nullptr, backend));
    auto got = RunKernel(Call(t, every_key, nullptr, backend));
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(MaxAbsDifference((*want)[0], (*got)[0]), 0.0);
    // One hidden key changes the rows that saw it.
    std::vector<int64_t> one_hidden(kB * keys, 1);
    one_hidden[1] = 0;
    auto padded = RunKernel(Call(t, Ints({kB, keys}, one_hidden), nullptr, backend));
    ASSERT_TRUE(padded.ok()) << padded.status();
    EXPECT_GT(MaxAbsDifference((*want)[0], (*padded)[0]), 1e-3);
  }
}

TEST(AttentionKeyPadding, WithoutBroadcastingOneEntryIsRefused) {
  for (const char* length : {static_cast<const char*>(nullptr), "keys"}) {
    auto out = RunKernel(Call(2, Ints({kB, 1}, {1, 1}), length, AttentionBackend::kAuto));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(out.status().message(), "must have shape [2, 5]")) << out.status();
  }
}

TEST(AttentionKeyPadding, ALengthOtherThanTheKeysOrOneIsRefused) {
  for (const char* length : {"broadcast", "broadcast_viewed"}) {
    auto out = RunKernel(Call(2, Ints({kB, 4}, std::vector<int64_t>(8, 1)), length, AttentionBackend::kAuto));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(out.status().message(), "which do not broadcast against the 5 keys"))
        << out.status();
  }
}

// One key (no past, one query) and a longer mask: broadcast, the scores get
// its keys, which P.V (broadcast) or the view back to one key
// (broadcast_viewed) refuses, unless the view reads an empty tensor.
TEST(AttentionKeyPadding, OneKeyAndALongerMask) {
  auto call = [](int64_t t, const char* length) {
    KernelCall c = Call(t, Ints({kB, 3}, std::vector<int64_t>(6, 1)), length, AttentionBackend::kAuto);
    c.inputs[0] = Random({kB, kH, t, kD}, 1);
    c.inputs[1] = Random({kB, kH, 1, kD}, 2);
    c.inputs[2] = Random({kB, kH, 1, kD}, 3);
    c.inputs.resize(4);
    c.inputs.push_back(Tensor());
    c.inputs.push_back(Tensor());
    c.inputs.push_back(Ints({kB, 3}, std::vector<int64_t>(6, 1)));
    return c;
  };
  for (const char* length : {"broadcast", "broadcast_viewed"}) {
    auto out = RunKernel(call(1, length));
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(absl::StrContains(out.status().message(), "where the attention has 1")) << out.status();
  }
  EXPECT_FALSE(RunKernel(call(0, "broadcast")).ok());
  auto empty = RunKernel(call(0, "broadcast_viewed"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].num_elements(), 0);
}

TEST(AttentionKeyPadding, TheAttributeNamesItsValues) {
  auto out = RunKernel(Call(2, Ints({kB, 1}, {1, 1}), "one", AttentionBackend::kAuto));
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "\"broadcast\"")) << out.status();
}

}  // namespace
}  // namespace attune::testing
