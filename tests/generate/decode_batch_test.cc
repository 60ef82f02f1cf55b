// attune::DecodeBatch (continuous batching): sequences that join and leave a
// decode batch between steps get the tokens each gets alone from
// Generator::Generate, greedy; on a model without position_ids only equal
// lengths share a run, with the same result; the refusals.
#include "attune/decode_batch.h"

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
