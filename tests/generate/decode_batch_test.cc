// attune::DecodeBatch (continuous batching): sequences that join and leave a
// decode batch between steps get the tokens each gets alone from
// Generator::Generate, greedy, also when several join at once (one prefill
// run); on a model without position_ids only equal lengths share a run, with
// the same result; the refusals; and a decode step of M rows gives each row
// the bits of that row's step alone.
#include "attune/decode_batch.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "attune/generator.h"
#include "attune/session.h"
#include "gtest/gtest.h"
#include "tests/common/paths.h"

namespace attune {
namespace {

std::unique_ptr<Session> Load(const std::string& name) {
  SessionOptions options;
  options.threads = 1;
  auto s = Session::Create(testing::SourceDir() + "/models/" + name + "/model.onnx", options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

std::vector<int64_t> Alone(const Session& session, const std::vector<int64_t>& prompt, int64_t max_new) {
  auto generator = Generator::Create(session);
  EXPECT_TRUE(generator.ok()) << generator.status();
  GenerationOptions o;
  o.max_new_tokens = max_new;
  auto result = (*generator)->Generate({prompt}, o);
  EXPECT_TRUE(result.ok()) << result.status();
  return result->generated_ids[0];
}

// Sequence k joins at step join[k] and leaves after max_new[k] tokens.
void CheckJoinsAndLeaves(const std::string& model) {
  auto session = Load(model);
  ASSERT_NE(session, nullptr);
  const std::vector<std::vector<int64_t>> prompts = {
      {47, 68, 25}, {67, 83, 23, 92, 57, 14, 23}, {72, 89, 42, 90, 8, 39, 68, 48, 7, 44, 0, 75}, {5}, {47, 68, 25}};
  const std::vector<int> join = {0, 0, 2, 5, 7};
  const std::vector<int64_t> max_new = {12, 4, 9, 15, 6};
  auto batch = DecodeBatch::Create(*session);
  ASSERT_TRUE(batch.ok()) << batch.status();
  std::map<int64_t, std::vector<int64_t>> got;
  size_t finished = 0;
  for (int step = 0; finished < prompts.size() && step < 100; ++step) {
    for (size_t k = 0; k < prompts.size(); ++k) {
      if (join[k] != step) continue;
      GenerationOptions o;
      o.max_new_tokens = max_new[k];
      auto first = (*batch)->Add(static_cast<int64_t>(k), prompts[k], o);
      ASSERT_TRUE(first.ok()) << first.status();
      got[k].push_back(*first);
    }
    for (size_t k = 0; k < prompts.size(); ++k)
      if (got.count(k) && static_cast<int64_t>(got[k].size()) == max_new[k] && join[k] <= step) {
        (*batch)->Remove(static_cast<int64_t>(k));
        got[k].push_back(-1);  // marks it removed
        ++finished;
      }
    if ((*batch)->size() == 0) continue;
    auto tokens = (*batch)->Step();
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    for (const auto& [id, token] : *tokens) got[id].push_back(token);
  }
  ASSERT_EQ(finished, prompts.size());
  for (size_t k = 0; k < prompts.size(); ++k) {
    std::vector<int64_t> ids = got[k];
    ids.pop_back();
    EXPECT_EQ(ids, Alone(*session, prompts[k], max_new[k])) << model << " sequence " << k;
  }
}

// Sequences joining in groups (AddAll: prompts of different lengths run
// together), one of them refused, then all decoding together.
void CheckJoinTogether(const std::string& model) {
  auto session = Load(model);
  ASSERT_NE(session, nullptr);
  const std::vector<std::vector<int64_t>> prompts = {
      {47, 68, 25}, {67, 83, 23, 92, 57, 14, 23}, {97}, {72, 89, 42, 90, 8, 39, 68, 48, 7, 44, 0, 75}, {5}, {47, 68, 25}};
  const std::vector<int64_t> max_new = {12, 4, 3, 9, 15, 6};
  auto batch = DecodeBatch::Create(*session);
  ASSERT_TRUE(batch.ok()) << batch.status();
  std::vector<GenerationOptions> options(prompts.size());
  for (size_t k = 0; k < prompts.size(); ++k) options[k].max_new_tokens = max_new[k];
  std::map<int64_t, std::vector<int64_t>> got;
  auto join = [&](size_t from, size_t to) {
    std::vector<DecodeBatch::Joining> joining;
    for (size_t k = from; k < to; ++k) joining.push_back({static_cast<int64_t>(k), &prompts[k], &options[k]});
    const auto firsts = (*batch)->AddAll(joining);
    ASSERT_EQ(firsts.size(), to - from);
    for (size_t k = from; k < to; ++k) {
      ASSERT_EQ(firsts[k - from].ok(), k != 2) << k << " " << firsts[k - from].status();  // 97: outside the vocabulary
      if (firsts[k - from].ok()) got[k].push_back(*firsts[k - from]);
    }
  };
  join(0, 3);
  for (int step = 0; step < 20 && (*batch)->size() > 0; ++step) {
    if (step == 2) join(3, 6);
    auto tokens = (*batch)->Step();
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    for (const auto& [id, token] : *tokens) {
      got[id].push_back(token);
      if (static_cast<int64_t>(got[id].size()) == max_new[id]) (*batch)->Remove(id);
    }
  }
  EXPECT_EQ((*batch)->size(), 0u);
  for (size_t k = 0; k < prompts.size(); ++k)
    if (k != 2) EXPECT_EQ(got[k], Alone(*session, prompts[k], max_new[k])) << model << " sequence " << k;
}

TEST(DecodeBatch, SequencesJoiningTogetherShareOnePrefillAndEqualEachAlone) {
  CheckJoinTogether("hf_gpt2_pos_decode");
  CheckJoinTogether("hf_gpt2_decode");  // equal lengths only per run
}

// One decode step of `rows` sequences (past of `past` positions, all valid)
// against each row's step alone: logits and presents bitwise equal.
TEST(DecodeBatch, AStepOfManyRowsGivesEachRowItsBitsAlone) {
  auto session = Load("hf_gpt2_pos_decode");
  ASSERT_NE(session, nullptr);
  const int64_t past = 9;
  for (int64_t rows : {2, 5, 8, 16}) {
    auto feeds_of = [&](int64_t first, int64_t count) {
      NamedTensors feeds;
      std::vector<int64_t> ids, mask, pos;
      for (int64_t r = first; r < first + count; ++r) {
        ids.push_back((r * 37 + 11) % 97);
        pos.push_back(past);
        for (int64_t j = 0; j <= past; ++j) mask.push_back(1);
      }
      feeds.emplace_back("input_ids", *Tensor::FromVector<int64_t>({count, 1}, ids));
      feeds.emplace_back("attention_mask", *Tensor::FromVector<int64_t>({count, past + 1}, mask));
      feeds.emplace_back("position_ids", *Tensor::FromVector<int64_t>({count, 1}, pos));
      for (const TensorInfo& in : session->inputs()) {
        if (in.name.rfind("past_key_values.", 0) != 0) continue;
        const int64_t heads = in.shape[1], dim = in.shape[3];
        std::vector<float> values;
        for (int64_t r = first; r < first + count; ++r)
          for (int64_t i = 0; i < heads * past * dim; ++i)
            values.push_back(static_cast<float>((r * 7919 + i * 31 + static_cast<int64_t>(in.name.size())) % 201) /
                                 100.0f - 1.0f);
        feeds.emplace_back(in.name, *Tensor::FromVector<float>({count, heads, past, dim}, values));
      }
      return feeds;
    };
    auto all = session->Run(feeds_of(0, rows));
    ASSERT_TRUE(all.ok()) << all.status();
    for (int64_t r = 0; r < rows; ++r) {
      auto one = session->Run(feeds_of(r, 1));
      ASSERT_TRUE(one.ok()) << one.status();
      for (size_t o = 0; o < one->size(); ++o) {
        const Tensor& many = (*all)[o].second;
        const Tensor& alone = (*one)[o].second;
        const size_t bytes = alone.byte_size();
        ASSERT_EQ(many.byte_size(), bytes * rows) << (*one)[o].first;
        EXPECT_EQ(std::memcmp(static_cast<const char*>(many.raw_data()) + r * bytes, alone.raw_data(), bytes), 0)
            << (*one)[o].first << " row " << r << " of " << rows;
      }
    }
  }
}

TEST(DecodeBatch, JoinAndLeaveMidGenerationEqualsEachAloneWithPositionIds) {
  CheckJoinsAndLeaves("hf_gpt2_pos_decode");
}

TEST(DecodeBatch, WithoutPositionIdsOnlyEqualLengthsShareARun) {
  auto session = Load("hf_gpt2_decode");
  ASSERT_NE(session, nullptr);
  auto batch = DecodeBatch::Create(*session);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_FALSE((*batch)->batches_unequal_lengths());
  CheckJoinsAndLeaves("hf_gpt2_decode");
}

TEST(DecodeBatch, Refusals) {
  auto session = Load("hf_gpt2_pos_decode");
  ASSERT_NE(session, nullptr);
  auto batch = DecodeBatch::Create(*session);
  ASSERT_TRUE(batch.ok());
  GenerationOptions o;
  EXPECT_FALSE((*batch)->Add(0, {}, o).ok());
  EXPECT_FALSE((*batch)->Add(0, {97}, o).ok());  // outside the vocabulary of 97
  o.max_new_tokens = 64;
  EXPECT_FALSE((*batch)->Add(0, {1, 2, 3}, o).ok());  // beyond the context of 64
  o.max_new_tokens = 2;
  ASSERT_TRUE((*batch)->Add(0, {1, 2, 3}, o).ok());
  EXPECT_FALSE((*batch)->Add(0, {1, 2, 3}, o).ok());  // the id is taken
  ASSERT_TRUE((*batch)->Step().ok());
  EXPECT_FALSE((*batch)->Step().ok());  // at its length limit
  (*batch)->Remove(0);
  EXPECT_EQ((*batch)->size(), 0u);
  auto bert = Load("hf_distilbert");
  ASSERT_NE(bert, nullptr);
  EXPECT_FALSE(DecodeBatch::Create(*bert).ok());
}

}  // namespace
}  // namespace attune
