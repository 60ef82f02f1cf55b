// attune::Generator on the KV-cache models in models/: greedy tokens equal a
// step-by-step loop of plain Session::Run calls written here, and PyTorch's
// greedy generation from the same weights (generate_reference.json, written by
// models/gen/generate_reference.py); batched prompts equal each prompt alone;
// sampling is reproducible for a seed; the refusals.
#include "attune/generator.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/common/paths.h"
#include "tests/importer/model_builder.h"

namespace attune {
namespace {

std::string ModelPath(const std::string& name) { return testing::SourceDir() + "/models/" + name + "/model.onnx"; }

nlohmann::json Reference(const std::string& name) {
  std::ifstream in(testing::SourceDir() + "/models/" + name + "/generate_reference.json");
  return nlohmann::json::parse(in);
}

std::unique_ptr<Session> Load(const std::string& name) {
  SessionOptions options;
  options.threads = 1;
  auto s = Session::Create(ModelPath(name), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// The greedy loop written out with Session::Run and nothing of the generator:
// the prompt through the decode graph with empty pasts (B, H, 0, D), then one
// token per run, every present fed back as the next past. One prompt, no mask
// unless the model has one (all ones then), positions counted from 0.
std::vector<int64_t> PlainGreedy(const Session& session, const std::vector<int64_t>& prompt, int64_t max_new) {
  std::vector<std::string> pasts, presents;
  bool has_mask = false, has_positions = false;
  for (const TensorInfo& in : session.inputs()) {
    has_mask |= in.name == "attention_mask";
    has_positions |= in.name == "position_ids";
    if (in.name.find("past") != std::string::npos) pasts.push_back(in.name);
  }
  for (const TensorInfo& out : session.outputs())
    if (out.name.find("present") != std::string::npos) presents.push_back(out.name);
  EXPECT_EQ(pasts.size(), presents.size());
  NamedTensors cache;
  for (const TensorInfo& in : session.inputs()) {
    if (in.name.find("past") == std::string::npos) continue;
    std::vector<int64_t> shape = in.shape;
    shape[0] = 1;
    shape[2] = 0;
    cache.emplace_back(in.name, *Tensor::Create(ElementType::kFloat32, shape));
  }
  std::vector<int64_t> ids = prompt, out;
  int64_t length = 0;
  for (int64_t step = 0; step < max_new; ++step) {
    const int64_t t = static_cast<int64_t>(ids.size());
    NamedTensors feeds = {{"input_ids", *Tensor::FromVector<int64_t>({1, t}, ids)}};
    if (has_mask)
      feeds.emplace_back("attention_mask",
                         *Tensor::FromVector<int64_t>({1, length + t}, std::vector<int64_t>(length + t, 1)));
    if (has_positions) {
      std::vector<int64_t> pos(t);
      for (int64_t i = 0; i < t; ++i) pos[i] = length + i;
      feeds.emplace_back("position_ids", *Tensor::FromVector<int64_t>({1, t}, pos));
    }
    feeds.insert(feeds.end(), cache.begin(), cache.end());
    auto outputs = session.Run(feeds);
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    if (!outputs.ok()) return out;
    const Tensor* logits = nullptr;
    for (const auto& [name, tensor] : *outputs) {
      if (name == "logits") logits = &tensor;
      for (size_t i = 0; i < presents.size(); ++i)
        if (name == presents[i]) cache[i].second = tensor;  // present i pairs with past i (same order)
    }
    const int64_t vocab = logits->shape()[2];
    const float* row = logits->data<float>() + (t - 1) * vocab;
    const int64_t next = std::max_element(row, row + vocab) - row;
    out.push_back(next);
    length += t;
    ids = {next};
  }
  return out;
}

struct ModelParam {
  std::string name;     // the decode model (and where the reference is)
  std::string prefill;  // "" when the decode graph also takes the prompt
};

class GeneratorModelTest : public ::testing::TestWithParam<ModelParam> {};

std::unique_ptr<Generator> MakeGenerator(const ModelParam& p, std::unique_ptr<Session>& decode,
                                         std::unique_ptr<Session>& prefill) {
  decode = Load(p.name);
  if (!p.prefill.empty()) prefill = Load(p.prefill);
  auto g = p.prefill.empty() ? Generator::Create(*decode) : Generator::Create(*prefill, *decode);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : nullptr;
}

// The three ways of keeping the cache: appended in place, two buffers in turn, copied per step.
struct CacheMode {
  const char* name;
  bool inplace;
  bool append;
};
constexpr CacheMode kCacheModes[] = {{"append", true, true}, {"ping-pong", true, false}, {"copy", false, false}};

TEST_P(GeneratorModelTest, GreedyEqualsPlainRunLoopAndPyTorch) {
  std::unique_ptr<Session> decode, prefill;
  std::unique_ptr<Generator> generator = MakeGenerator(GetParam(), decode, prefill);
  ASSERT_NE(generator, nullptr);
  // Every attention block of these models is fused, so every cache tensor is appended in place.
  ASSERT_EQ(generator->cache_paths().size(), generator->decode_signature().cache.size());
  for (const CachePath& path : generator->cache_paths())
    EXPECT_TRUE(path.appended) << path.past << ": " << path.why_not;
  const nlohmann::json ref = Reference(GetParam().name);
  const int64_t max_new = ref["max_new_tokens"];
  int cases = 0;
  for (const nlohmann::json& c : ref["cases"]) {
    const auto prompts = c["prompts"].get<std::vector<std::vector<int64_t>>>();
    const auto expected = c["generated_ids"].get<std::vector<std::vector<int64_t>>>();
    for (const CacheMode& mode : kCacheModes) {
      GenerationOptions options;
      options.max_new_tokens = max_new;
      options.inplace_cache = mode.inplace;
      options.append_cache = mode.append;
      auto result = generator->Generate(prompts, options);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->generated_ids, expected) << "PyTorch, cache " << mode.name << ", case " << cases;
      EXPECT_EQ(result->step_ms.size(), static_cast<size_t>(max_new - 1));
      EXPECT_GT(result->tokens_per_s, 0);
      EXPECT_LE(result->token_ms_median, result->token_ms_p90);
    }
    if (prompts.size() == 1)
      EXPECT_EQ(PlainGreedy(*decode, prompts[0], max_new), expected[0]) << "plain loop vs PyTorch, case " << cases;
    ++cases;
  }
  EXPECT_GE(cases, 3);
}

INSTANTIATE_TEST_SUITE_P(Models, GeneratorModelTest,
                         ::testing::Values(ModelParam{"gpt_kvcache", ""}, ModelParam{"hf_gpt2_decode", ""},
                                           ModelParam{"hf_gpt2_pos_decode", ""},
                                           ModelParam{"hf_gpt2_pos_decode", "hf_gpt2_pos_prefill"},
                                           ModelParam{"hf_llama_decode", ""}),
                         [](const auto& info) {
                           return info.param.name + (info.param.prefill.empty() ? "" : "_with_prefill");
                         });

// Without the fusions no attention node reads the pasts: every cache tensor
// falls back to two buffers in turn, says why, and gives the same tokens.
TEST(GeneratorTest, UnfusedAttentionFallsBackToPingPong) {
  for (const std::string name : {"hf_gpt2_decode", "hf_llama_decode"}) {
    SessionOptions session_options;
    session_options.threads = 1;
    session_options.fuse = false;
    auto decode = Session::Create(ModelPath(name), session_options);
    ASSERT_TRUE(decode.ok()) << decode.status();
    auto generator = Generator::Create(**decode);
    ASSERT_TRUE(generator.ok()) << generator.status();
    ASSERT_FALSE((*generator)->cache_paths().empty());
    for (const CachePath& path : (*generator)->cache_paths()) {
      EXPECT_FALSE(path.appended) << path.past;
      EXPECT_NE(path.why_not.find("cannot be read in place"), std::string::npos) << path.why_not;
    }
    const nlohmann::json ref = Reference(name);
    for (const nlohmann::json& c : ref["cases"]) {
      GenerationOptions options;
      options.max_new_tokens = ref["max_new_tokens"];
      auto result = (*generator)->Generate(c["prompts"].get<std::vector<std::vector<int64_t>>>(), options);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->generated_ids, c["generated_ids"].get<std::vector<std::vector<int64_t>>>()) << name;
    }
  }
}

TEST(GeneratorTest, PrefillGraphGivesTheSameTokensAsTheDecodeGraphAlone) {
  auto decode = Load("hf_gpt2_pos_decode");
  auto prefill = Load("hf_gpt2_pos_prefill");
  auto alone = Generator::Create(*decode);
  auto pair = Generator::Create(*prefill, *decode);
  ASSERT_TRUE(alone.ok() && pair.ok());
  GenerationOptions options;
  options.max_new_tokens = 12;
  const std::vector<std::vector<int64_t>> prompts = {{3, 1, 4, 1, 5, 9, 2, 6}, {5, 3}};
  auto a = (*alone)->Generate(prompts, options);
  auto b = (*pair)->Generate(prompts, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->generated_ids, b->generated_ids);
}

TEST(GeneratorTest, LeftPaddedBatchEqualsEachPromptAlone) {
  auto decode = Load("hf_gpt2_pos_decode");
  auto generator = Generator::Create(*decode);
  ASSERT_TRUE(generator.ok());
  const std::vector<std::vector<int64_t>> prompts = {{11}, {20, 21, 22, 23, 24, 25, 26, 27, 28}, {40, 41, 42, 43}};
  std::vector<std::vector<int64_t>> appended;
  for (const CacheMode& mode : kCacheModes) {
    GenerationOptions options;
    options.max_new_tokens = 15;
    options.inplace_cache = mode.inplace;
    options.append_cache = mode.append;
    auto batch = (*generator)->Generate(prompts, options);
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_TRUE(batch->notes.empty());
    for (size_t r = 0; r < prompts.size(); ++r) {
      auto alone = (*generator)->Generate({prompts[r]}, options);
      ASSERT_TRUE(alone.ok());
      EXPECT_EQ(batch->generated_ids[r], alone->generated_ids[0]) << "prompt " << r << " cache " << mode.name;
    }
    if (appended.empty()) appended = batch->generated_ids;
    EXPECT_EQ(batch->generated_ids, appended) << "cache " << mode.name << " vs append";
  }
}

TEST(GeneratorTest, SamplingIsReproducibleForASeed) {
  auto decode = Load("gpt_kvcache");
  auto generator = Generator::Create(*decode);
  ASSERT_TRUE(generator.ok());
  GenerationOptions options;
  options.greedy = false;
  options.temperature = 1.5f;
  options.top_k = 40;
  options.top_p = 0.95f;
  options.max_new_tokens = 30;
  options.seed = 1234;
  const std::vector<std::vector<int64_t>> prompts = {{1, 2, 3}};
  auto a = (*generator)->Generate(prompts, options);
  auto b = (*generator)->Generate(prompts, options);
  options.inplace_cache = false;
  auto c = (*generator)->Generate(prompts, options);
  options.seed = 99;
  auto d = (*generator)->Generate(prompts, options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(a->generated_ids, b->generated_ids);
  EXPECT_EQ(a->generated_ids, c->generated_ids);
  EXPECT_NE(a->generated_ids, d->generated_ids);
  options.greedy = true;
  auto greedy = (*generator)->Generate(prompts, options);
  ASSERT_TRUE(greedy.ok());
  EXPECT_NE(a->generated_ids, greedy->generated_ids);  // hot sampling leaves the argmax path
}

TEST(GeneratorTest, StopsAtEosAndWhenTheCallbackSaysSo) {
  auto decode = Load("gpt_kvcache");
  auto generator = Generator::Create(*decode);
  ASSERT_TRUE(generator.ok());
  GenerationOptions options;
  options.max_new_tokens = 20;
  auto full = (*generator)->Generate({{47, 68, 25}}, options);
  ASSERT_TRUE(full.ok());
  const std::vector<int64_t>& ids = full->generated_ids[0];
  // The stored greedy run is 51 88 54 41 94 ...: stop at its fourth token.
  options.eos_id = ids[3];
  auto stopped = (*generator)->Generate({{47, 68, 25}}, options);
  ASSERT_TRUE(stopped.ok());
  const auto first_eos = std::find(ids.begin(), ids.end(), options.eos_id);
  EXPECT_EQ(stopped->generated_ids[0], std::vector<int64_t>(ids.begin(), first_eos + 1));
  options.eos_id = -1;
  int calls = 0;
  auto cut = (*generator)->Generate({{47, 68, 25}}, options, [&](const TokenEvent& e) {
    EXPECT_EQ(e.step, calls);
    return ++calls < 5;
  });
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(cut->generated_ids[0], std::vector<int64_t>(ids.begin(), ids.begin() + 5));
}

TEST(GeneratorTest, Refusals) {
  auto decode = Load("gpt_kvcache");
  auto generator = Generator::Create(*decode);
  ASSERT_TRUE(generator.ok());
  GenerationOptions options;
  auto outside = (*generator)->Generate({{1, 97}}, options);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("outside the vocabulary"), std::string::npos) << outside.status();
  auto too_long = (*generator)->Generate({std::vector<int64_t>(65, 1)}, options);
  EXPECT_NE(too_long.status().message().find("longer than the model's context"), std::string::npos)
      << too_long.status();
  options.max_new_tokens = 60;
  auto too_many = (*generator)->Generate({std::vector<int64_t>(10, 1)}, options);
  EXPECT_NE(too_many.status().message().find("exceeds"), std::string::npos) << too_many.status();
  options.max_new_tokens = 4;
  options.max_context = 8;
  auto user_limit = (*generator)->Generate({std::vector<int64_t>(9, 1)}, options);
  EXPECT_NE(user_limit.status().message().find("context limit of 8"), std::string::npos) << user_limit.status();
  options.max_context = 0;
  auto unequal = (*generator)->Generate({{1, 2}, {3}}, options);
  EXPECT_NE(unequal.status().message().find("attention_mask"), std::string::npos) << unequal.status();
  options.max_cache_bytes = 1024;
  auto big = (*generator)->Generate({{1, 2}}, options);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted) << big.status();
  options.max_cache_bytes = kDefaultMaxTensorBytes;
  options.inplace_cache = false;
  options.max_cache_bytes = 1024;  // the copy loop honours the limit too (checked before the prompt runs)
  auto big_copy = (*generator)->Generate({{1, 2}}, options);
  EXPECT_EQ(big_copy.status().code(), absl::StatusCode::kResourceExhausted) << big_copy.status();

  auto mha = Load("mha_causal");
  auto not_decoder = Generator::Create(*mha);
  EXPECT_EQ(not_decoder.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(not_decoder.status().message().find("not a decoder"), std::string::npos) << not_decoder.status();
  auto prefill_only = Load("hf_gpt2_prefill");
  auto no_past = Generator::Create(*prefill_only);
  EXPECT_NE(no_past.status().message().find("no past/present"), std::string::npos) << no_past.status();
}

// logits = Cast(input_ids) to float: a stand-in decoder's only computation.
void LogitsFromIds(onnx::ModelProto& m) {
  auto* cast = testing::AddNode(m, "Cast", {"input_ids"}, {"logits"});
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
}

TEST(GeneratorTest, AnInputItCannotFeedIsRefusedAtCreate) {
  // A decoder with an extra flag input (as merged exports have): named, not guessed at.
  onnx::ModelProto m = testing::MinimalModel();
  testing::AddInput(m, "input_ids", onnx::TensorProto::INT64, {std::string("b"), std::string("s")});
  testing::AddInput(m, "past_key_0", onnx::TensorProto::FLOAT,
                    {std::string("b"), int64_t{2}, std::string("p"), int64_t{4}});
  testing::AddInput(m, "use_cache_branch", onnx::TensorProto::BOOL, {int64_t{1}});
  LogitsFromIds(m);
  testing::AddNode(m, "Identity", {"past_key_0"}, {"present_key_0"});
  testing::AddNode(m, "Not", {"use_cache_branch"}, {"flag"});
  testing::AddOutput(m, "logits", onnx::TensorProto::FLOAT, {std::string("b"), std::string("s")});
  testing::AddOutput(m, "present_key_0", onnx::TensorProto::FLOAT,
                     {std::string("b"), int64_t{2}, std::string("p"), int64_t{4}});
  testing::AddOutput(m, "flag", onnx::TensorProto::BOOL, {int64_t{1}});
  auto session = Session::CreateFromBytes(m.SerializeAsString());
  ASSERT_TRUE(session.ok()) << session.status();
  auto g = Generator::Create(**session);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(g.status().message().find("'use_cache_branch'"), std::string::npos) << g.status();
}

TEST(GeneratorTest, APastWhoseLeadingDimIsNotTheBatchNeedsAPrefillModel) {
  // BLOOM's cache is (batch * heads, ...): a batch size alone does not size an empty one.
  onnx::ModelProto m = testing::MinimalModel();
  testing::AddInput(m, "input_ids", onnx::TensorProto::INT64, {std::string("b"), std::string("s")});
  testing::AddInput(m, "past_key_0", onnx::TensorProto::FLOAT,
                    {std::string("bh"), int64_t{2}, std::string("p"), int64_t{4}});
  LogitsFromIds(m);
  testing::AddNode(m, "Identity", {"past_key_0"}, {"present_key_0"});
  testing::AddOutput(m, "logits", onnx::TensorProto::FLOAT, {std::string("b"), std::string("s")});
  testing::AddOutput(m, "present_key_0", onnx::TensorProto::FLOAT,
                     {std::string("bh"), int64_t{2}, std::string("p"), int64_t{4}});
  auto session = Session::CreateFromBytes(m.SerializeAsString());
  ASSERT_TRUE(session.ok()) << session.status();
  auto g = Generator::Create(**session);
  ASSERT_TRUE(g.ok()) << g.status();
  auto result = (*g)->Generate({{1, 2}}, GenerationOptions{});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("dimension 0 'bh', not the batch 'b'"), std::string::npos)
      << result.status();
}

TEST(GeneratorTest, PaddingWithoutPositionIdsIsNoted) {
  auto decode = Load("hf_gpt2_decode");
  auto generator = Generator::Create(*decode);
  ASSERT_TRUE(generator.ok());
  GenerationOptions options;
  options.max_new_tokens = 3;
  auto r = (*generator)->Generate({{1, 2, 3}, {4}}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("position_ids"), std::string::npos);
}

// GPTBigCode counts its positions from the mask (cumsum(attention_mask) - 1):
// left padding shifts none, so a padded batch needs no note and gives each
// prompt's tokens alone.
TEST(GeneratorTest, PositionsCountedFromTheMaskNeedNoPositionIds) {
  auto decode = Load("hf_gpt_bigcode_decode");
  auto signature = FindDecoderSignature(*decode);
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_TRUE(signature->position_ids.empty());
  EXPECT_TRUE(signature->positions_from_mask);
  auto gpt2 = FindDecoderSignature(*Load("hf_gpt2_decode"));
  ASSERT_TRUE(gpt2.ok()) << gpt2.status();
  EXPECT_FALSE(gpt2->positions_from_mask);  // arange(past, past + T): the padding shifts it

  auto generator = Generator::Create(*decode);
  ASSERT_TRUE(generator.ok()) << generator.status();
  GenerationOptions options;
  options.max_new_tokens = 6;
  const std::vector<std::vector<int64_t>> prompts = {{7, 8, 9, 10, 11}, {30, 31}};
  auto batch = (*generator)->Generate(prompts, options);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_TRUE(batch->notes.empty());
  for (size_t r = 0; r < prompts.size(); ++r) {
    auto alone = (*generator)->Generate({prompts[r]}, options);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_EQ(batch->generated_ids[r], alone->generated_ids[0]) << "prompt " << r;
  }
}

}  // namespace
}  // namespace attune
