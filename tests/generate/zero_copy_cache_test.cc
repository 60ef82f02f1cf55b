// The in-place cache's claims. Ping-pong: each decode step's present tensors
// are computed by the model straight into the caller's cache buffer (no copy
// after the run), and its past inputs are read where they lie; checked on the
// plan itself: the executor returns the caller's buffer when it used it.
// Appended (Session RunOptions cache buffers): the model reads the past rows
// in one (B, H, capacity, D) buffer and writes only the new rows after them;
// rows it must not touch are poisoned and must survive, and the results equal
// a plain run on dense tensors bit for bit (non-finite entries included).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attune/generator.h"
#include "attune/session.h"
#include "engine/generate/kv_cache.h"
#include "engine/session_access.h"
#include "gtest/gtest.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

class ZeroCopyCacheTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZeroCopyCacheTest, PresentsAreComputedInTheCallersBuffers) {
  SessionOptions options;
  options.threads = 1;
  auto session = Session::Create(testing::SourceDir() + "/models/" + GetParam() + "/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  const int64_t past = 6;
  NamedTensors inputs;
  for (const TensorInfo& in : (*session)->inputs()) {
    std::vector<int64_t> shape = in.shape;
    if (in.name == "input_ids" || in.name == "position_ids") shape = {1, 1};
    if (in.name == "attention_mask") shape = {1, past + 1};
    if (in.name.find("past") != std::string::npos) {
      shape[0] = 1;
      shape[2] = past;
    }
    auto t = Tensor::Create(in.type, shape);
    ASSERT_TRUE(t.ok());
    if (in.name == "attention_mask") std::fill_n(t->data<int64_t>(), past + 1, 1);
    if (in.name == "position_ids") t->data<int64_t>()[0] = past;
    inputs.emplace_back(in.name, *t);
  }
  std::vector<Tensor> buffers;
  std::vector<size_t> present_index;
  for (size_t o = 0; o < (*session)->outputs().size(); ++o) {
    const TensorInfo& out = (*session)->outputs()[o];
    if (out.name.find("present") == std::string::npos) {
      buffers.emplace_back();
      continue;
    }
    std::vector<int64_t> shape = out.shape;
    shape[0] = 1;
    shape[2] = past + 1;
    buffers.push_back(*Tensor::Create(out.type, shape));
    present_index.push_back(o);
  }
  ASSERT_FALSE(present_index.empty());
  auto results = GetSessionImpl(**session).Run(inputs, nullptr, &buffers);
  ASSERT_TRUE(results.ok()) << results.status();
  for (size_t o : present_index)
    EXPECT_EQ((*results)[o].second.raw_data(), buffers[o].raw_data())
        << (*results)[o].first << " was computed elsewhere (RunInto would copy it)";
}

INSTANTIATE_TEST_SUITE_P(Models, ZeroCopyCacheTest,
                         ::testing::Values("gpt_kvcache", "hf_gpt2_decode", "hf_gpt2_pos_decode"));

// A NaN with a payload no computation produces: a poisoned row that survives
// keeps exactly these bits.
constexpr uint32_t kPoison = 0x7fa00badu;

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// Decode-step inputs at past length `past`, `t` new tokens, batch 2 with row 1
// left-padded by 2 (when the model takes attention_mask); pasts filled with
// deterministic values in [-1, 1).
NamedTensors StepInputs(const Session& session, int64_t past, int64_t t) {
  const int64_t batch = 2, pad = 2;
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  };
  NamedTensors inputs;
  for (const TensorInfo& in : session.inputs()) {
    Tensor tensor;
    if (in.name == "input_ids") {
      std::vector<int64_t> ids(batch * t);
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(7 + 11 * i) % 50;
      tensor = *Tensor::FromVector<int64_t>({batch, t}, ids);
    } else if (in.name == "attention_mask") {
      std::vector<int64_t> mask(batch * (past + t), 1);
      for (int64_t j = 0; j < pad; ++j) mask[(past + t) + j] = 0;
      tensor = *Tensor::FromVector<int64_t>({batch, past + t}, mask);
    } else if (in.name == "position_ids") {
      std::vector<int64_t> pos(batch * t);
      for (int64_t r = 0; r < batch; ++r)
        for (int64_t i = 0; i < t; ++i) pos[r * t + i] = std::max<int64_t>(0, past + i - (r == 1 ? pad : 0));
      tensor = *Tensor::FromVector<int64_t>({batch, t}, pos);
    } else {
      std::vector<int64_t> shape = in.shape;
      shape[0] = batch;
      shape[2] = past;
      tensor = *Tensor::Create(ElementType::kFloat32, shape);
      for (int64_t i = 0; i < tensor.num_elements(); ++i) tensor.data<float>()[i] = next();
    }
    inputs.emplace_back(in.name, tensor);
  }
  return inputs;
}

const Tensor& Named(const NamedTensors& tensors, const std::string& name) {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  ADD_FAILURE() << "no tensor " << name;
  static const Tensor none;
  return none;
}

// One appended step against a plain Run on dense tensors, with `past` rows
// bound and `t` new ones; `spoil` may change the inputs first (both runs see it).
// With `via_run`, Session::Run with the cache buffers instead of RunInto: it
// returns every output but the bound presents.
void CheckAppendedStep(const std::string& model, int64_t past, int64_t t,
                       const std::function<void(NamedTensors&)>& spoil = {}, bool via_run = false) {
  SCOPED_TRACE(model);
  SessionOptions options;
  options.threads = 1;
  auto session = Session::Create(testing::SourceDir() + "/models/" + model + "/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto sig = FindDecoderSignature(**session);
  ASSERT_TRUE(sig.ok()) << sig.status();
  NamedTensors inputs = StepInputs(**session, past, t);
  if (spoil) spoil(inputs);
  auto dense = (*session)->Run(inputs);
  ASSERT_TRUE(dense.ok()) << dense.status();

  // Each past in a buffer of capacity past + t + 3: rows [0, past) hold it,
  // rows [past, capacity) are poisoned. A present written whole (dense, from
  // the start of the buffer) would overwrite the poison after the new rows of
  // the first head with the second head's rows.
  const int64_t capacity = past + t + 3;
  std::vector<Tensor> buffers;
  std::vector<std::vector<uint32_t>> before;
  std::unique_ptr<bool[]> finite(new bool[sig->cache.size()]);
  RunOptions run;
  NamedTensors feeds;
  for (const auto& [name, tensor] : inputs) {
    bool is_past = false;
    for (const CacheBinding& b : sig->cache) is_past |= b.past == name;
    if (!is_past) feeds.emplace_back(name, tensor);
  }
  for (size_t i = 0; i < sig->cache.size(); ++i) {
    const CacheBinding& b = sig->cache[i];
    const absl::Status bindable = (*session)->CheckCacheBuffer(b.past, b.present);
    ASSERT_TRUE(bindable.ok()) << bindable;
    const Tensor& p = Named(inputs, b.past);
    const std::vector<int64_t>& s = p.shape();
    Tensor buffer = *Tensor::Create(ElementType::kFloat32, {s[0], s[1], capacity, s[3]});
    float* data = buffer.data<float>();
    for (int64_t bh = 0; bh < s[0] * s[1]; ++bh)
      for (int64_t r = 0; r < capacity; ++r)
        for (int64_t d = 0; d < s[3]; ++d) {
          float* x = data + (bh * capacity + r) * s[3] + d;
          if (r < past) {
            *x = p.data<float>()[(bh * past + r) * s[3] + d];
          } else {
            std::memcpy(x, &kPoison, sizeof(kPoison));
          }
        }
    before.emplace_back(buffer.num_elements());
    std::memcpy(before.back().data(), data, buffer.byte_size());
    finite[i] = false;
    run.caches.push_back({b.past, b.present, buffer.view(), past, &finite[i]});
    buffers.push_back(buffer);
  }
  const Tensor& dense_logits = Named(*dense, sig->logits);
  Tensor logits = *Tensor::Create(ElementType::kFloat32, dense_logits.shape());
  if (via_run) {
    auto results = (*session)->Run(feeds, run);
    ASSERT_TRUE(results.ok()) << results.status();
    ASSERT_EQ(results->size(), (*session)->outputs().size() - sig->cache.size());
    for (const auto& [name, tensor] : *results)
      for (const CacheBinding& b : sig->cache) EXPECT_NE(name, b.present);
    logits = Named(*results, sig->logits);
  } else {
    const absl::Status status = (*session)->RunInto(feeds, {{sig->logits, logits.view()}}, run);
    ASSERT_TRUE(status.ok()) << status;
  }

  for (int64_t i = 0; i < logits.num_elements(); ++i)
    ASSERT_EQ(Bits(logits.data<float>()[i]), Bits(dense_logits.data<float>()[i])) << "logit " << i;
  for (size_t i = 0; i < sig->cache.size(); ++i) {
    SCOPED_TRACE(sig->cache[i].present);
    const Tensor& present = Named(*dense, sig->cache[i].present);
    const std::vector<int64_t>& s = present.shape();
    ASSERT_EQ(s[2], past + t);
    const float* data = buffers[i].data<float>();
    bool all_finite = true;
    for (int64_t bh = 0; bh < s[0] * s[1]; ++bh)
      for (int64_t r = 0; r < capacity; ++r)
        for (int64_t d = 0; d < s[3]; ++d) {
          const int64_t at = (bh * capacity + r) * s[3] + d;
          if (r < past) {
            ASSERT_EQ(Bits(data[at]), before[i][at]) << "past row " << r << " of block " << bh << " was written";
          } else if (r < past + t) {
            ASSERT_EQ(Bits(data[at]), Bits(present.data<float>()[(bh * (past + t) + r) * s[3] + d]))
                << "new row " << r << " of block " << bh;
          } else {
            ASSERT_EQ(Bits(data[at]), kPoison)
                << "row " << r << " after the new ones of block " << bh << " was written";
          }
          if (r < past + t) all_finite &= std::isfinite(data[at]);
        }
    EXPECT_EQ(finite[i], all_finite);
  }
}

class AppendedCacheTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AppendedCacheTest, OnlyTheNewRowsAreWrittenAndResultsEqualADenseRun) {
  CheckAppendedStep(GetParam(), 5, 1);
  CheckAppendedStep(GetParam(), 4, 3);
  CheckAppendedStep(GetParam(), 0, 4);  // the prompt through the decode graph: an empty past
  CheckAppendedStep(GetParam(), 0, 4, {}, /*via_run=*/true);
  CheckAppendedStep(GetParam(), 3, 2, {}, /*via_run=*/true);
}

// A non-finite past entry reaches the output the same way as on dense
// tensors (the kernel does not take the appended rows for finite), and the
// binding remembers the rows are not all finite.
TEST_P(AppendedCacheTest, NonFinitePastEntriesGiveTheDenseRunsResult) {
  for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    CheckAppendedStep(GetParam(), 5, 1, [bad](NamedTensors& inputs) {
      for (auto& [name, t] : inputs)
        if (name.find("past") != std::string::npos)
          t.data<float>()[t.num_elements() / 2 + 3] = bad;  // an entry of batch row 1
    });
}

INSTANTIATE_TEST_SUITE_P(Models, AppendedCacheTest,
                         ::testing::Values("gpt_kvcache", "hf_gpt2_decode", "hf_gpt2_pos_decode", "hf_llama_decode"));

TEST(AppendedCacheTest, RefusedWhereAttentionIsNotFused) {
  SessionOptions options;
  options.threads = 1;
  options.fuse = false;
  auto session = Session::Create(testing::SourceDir() + "/models/hf_gpt2_decode/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  const absl::Status status = (*session)->CheckCacheBuffer("past_key_values.0.key", "present.0.key");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("is read by node"), std::string::npos) << status;
  // Binding it anyway is refused with the same reason, before anything runs.
  Tensor buffer = *Tensor::Create(ElementType::kFloat32, {1, 4, 8, 16});
  RunOptions run;
  run.caches.push_back({"past_key_values.0.key", "present.0.key", buffer.view(), 0, nullptr});
  const absl::Status bound = (*session)->RunInto({}, {}, run);
  EXPECT_EQ(bound.code(), absl::StatusCode::kFailedPrecondition) << bound;
}

TEST(AppendedCacheTest, AKeyPastAndAValuePresentAreNotOnePair) {
  SessionOptions options;
  options.threads = 1;
  auto session = Session::Create(testing::SourceDir() + "/models/hf_gpt2_decode/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->CheckCacheBuffer("past_key_values.0.key", "present.0.key").ok());
  const absl::Status status = (*session)->CheckCacheBuffer("past_key_values.0.key", "present.0.value");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("not the same cache tensor"), std::string::npos) << status;
  EXPECT_FALSE((*session)->CheckCacheBuffer("past_key_values.0.key", "present.1.key").ok());
}

// The generator's appended cache is one buffer per tensor, at one address for
// the whole run, with the length advancing.
TEST(KvCacheTest, AnAppendedTensorKeepsOneBuffer) {
  auto cache = KvCache::Create({{"past", ElementType::kFloat32, {1, 2, 0, 4}, 2, "present", true},
                                {"past2", ElementType::kFloat32, {1, 2, 0, 4}, 2, "present2", false}},
                               10, 1 << 20);
  ASSERT_TRUE(cache.ok()) << cache.status();
  Tensor prompt = *Tensor::Create(ElementType::kFloat32, {1, 2, 3, 4});
  for (int64_t i = 0; i < prompt.num_elements(); ++i) prompt.data<float>()[i] = static_cast<float>(i);
  cache->SetLength(3);
  ASSERT_TRUE(cache->Load(0, prompt).ok());
  const CacheBuffer first = cache->Binding(0);
  EXPECT_EQ(first.length, 3);
  EXPECT_EQ(first.buffer.shape, (std::vector<int64_t>{1, 2, 10, 4}));
  // The prompt's rows of head 1 start at row 0 of head 1 (capacity rows after head 0).
  EXPECT_EQ(static_cast<const float*>(first.buffer.data)[10 * 4], 12.0f);
  EXPECT_FALSE(cache->Past(0).ok());
  auto pp_before = cache->Past(1);
  ASSERT_TRUE(pp_before.ok());
  cache->Advance(4);
  const CacheBuffer second = cache->Binding(0);
  EXPECT_EQ(second.buffer.data, first.buffer.data);
  EXPECT_EQ(second.length, 4);
  EXPECT_NE(cache->Past(1)->raw_data(), pp_before->raw_data());  // the ping-pong tensor swapped buffers
}

}  // namespace
}  // namespace attune
