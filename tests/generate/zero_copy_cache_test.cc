// The in-place cache's claim: each decode step's present tensors are computed
// by the model straight into the caller's cache buffer (no copy after the
// run), and its past inputs are read where they lie. Checked on the plan
// itself: the executor returns the caller's buffer when it used it.
#include <string>
#include <vector>

#include "attune/session.h"
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

}  // namespace
}  // namespace attune
