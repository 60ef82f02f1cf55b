// Finding a decoder's convention from input/output names and shapes, for the
// spellings torch and the Hugging Face exporters use.
#include "engine/generate/signature.h"

#include "gtest/gtest.h"

namespace attune {
namespace {

TensorInfo Info(std::string name, ElementType type, std::vector<std::string> dims) {
  TensorInfo info;
  info.name = std::move(name);
  info.type = type;
  info.has_shape = true;
  for (const std::string& d : dims) {
    const bool number = !d.empty() && std::all_of(d.begin(), d.end(), ::isdigit);
    info.shape.push_back(number ? std::stoll(d) : -1);
    info.shape_symbols.push_back(number ? "" : d);
  }
  return info;
}

TensorInfo Ids(const std::string& name = "input_ids") { return Info(name, ElementType::kInt64, {"batch", "seq"}); }
TensorInfo Kv(const std::string& name, const std::string& seq) {
  return Info(name, ElementType::kFloat32, {"batch", "12", seq, "64"});
}
TensorInfo Logits() { return Info("logits", ElementType::kFloat32, {"batch", "seq", "50257"}); }

std::vector<std::pair<std::string, std::string>> Pairs(const DecoderSignature& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CacheBinding& b : s.cache) out.emplace_back(b.past, b.present);
  return out;
}

TEST(SignatureTest, HuggingFaceNamesPairByLayerAndKind) {
  // Outputs deliberately in another order than the inputs.
  std::vector<TensorInfo> in = {Ids(),
                                Info("attention_mask", ElementType::kInt64, {"batch", "total"}),
                                Info("position_ids", ElementType::kInt64, {"batch", "seq"}),
                                Kv("past_key_values.0.key", "past"),
                                Kv("past_key_values.0.value", "past"),
                                Kv("past_key_values.1.key", "past"),
                                Kv("past_key_values.1.value", "past")};
  std::vector<TensorInfo> out = {Logits(), Kv("present.1.value", "total"), Kv("present.1.key", "total"),
                                 Kv("present.0.value", "total"), Kv("present.0.key", "total")};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->input_ids, "input_ids");
  EXPECT_EQ(s->attention_mask, "attention_mask");
  EXPECT_EQ(s->position_ids, "position_ids");
  EXPECT_EQ(s->logits, "logits");
  EXPECT_EQ(s->vocab_size, 50257);
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(*s), (std::vector<P>{{"past_key_values.0.key", "present.0.key"},
                                       {"past_key_values.0.value", "present.0.value"},
                                       {"past_key_values.1.key", "present.1.key"},
                                       {"past_key_values.1.value", "present.1.value"}}));
  EXPECT_EQ(s->cache[1].kind, "value");
  EXPECT_EQ(s->cache[2].layer, 1);
  EXPECT_EQ(s->cache[0].seq_axis, 2);
}

TEST(SignatureTest, KeyValuesNamesTheCollectionNotAKind) {
  // GPTBigCode: one (B, S, 2D) tensor per layer, named past_key_values.N / present.N.
  auto kv = [](const std::string& n, const std::string& seq) {
    return Info(n, ElementType::kFloat32, {"batch", seq, "256"});
  };
  std::vector<TensorInfo> in = {Ids(), Info("attention_mask", ElementType::kInt64, {"batch", "total"}),
                                kv("past_key_values.0", "past"), kv("past_key_values.1", "past")};
  std::vector<TensorInfo> out = {Logits(), kv("present.0", "total"), kv("present.1", "total")};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(*s), (std::vector<P>{{"past_key_values.0", "present.0"}, {"past_key_values.1", "present.1"}}));
  for (const CacheBinding& b : s->cache) {
    EXPECT_EQ(b.kind, "kv") << b.past;
    EXPECT_EQ(b.seq_axis, 1) << b.past;
  }
  EXPECT_EQ(s->cache[1].layer, 1);
}

TEST(SignatureTest, TorchExportNames) {
  std::vector<TensorInfo> in = {Ids(), Kv("past_key_0", "p"), Kv("past_value_0", "p")};
  std::vector<TensorInfo> out = {Logits(), Kv("present_value_0", "t"), Kv("present_key_0", "t")};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(*s), (std::vector<P>{{"past_key_0", "present_key_0"}, {"past_value_0", "present_value_0"}}));
  EXPECT_TRUE(s->attention_mask.empty());
}

TEST(SignatureTest, OneTensorPerLayerGrowsOnAxisThree) {
  // GPT-2's older exports: past_N (2, B, H, S, D) holding key and value.
  auto kv = [](const std::string& n, const std::string& seq) {
    return Info(n, ElementType::kFloat32, {"2", "batch", "12", seq, "64"});
  };
  std::vector<TensorInfo> in = {Ids(), kv("past_0", "past_seq"), kv("past_1", "past_seq")};
  std::vector<TensorInfo> out = {Logits(), kv("present_0", "total_seq"), kv("present_1", "total_seq")};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->cache.size(), 2u);
  EXPECT_EQ(s->cache[1].present, "present_1");
  EXPECT_EQ(s->cache[0].kind, "kv");
  EXPECT_EQ(s->cache[0].seq_axis, 3);
}

TEST(SignatureTest, BloomCacheGrowsOnTheAxisThatAddsTheTokens) {
  // BLOOM: keys (B*H, D, past), values (B*H, past, D); the presents' first
  // dim is named after the model's batch (4*batch), not the past's own symbol.
  std::vector<TensorInfo> in = {Ids(), Info("past_key_values.0.key", ElementType::kFloat32, {"batch_x_heads", "16", "past_seq"}),
                                Info("past_key_values.0.value", ElementType::kFloat32, {"batch_x_heads", "past_seq", "16"})};
  std::vector<TensorInfo> out = {Logits(), Info("present.0.key", ElementType::kFloat32, {"4*batch", "16", "past_seq+seq"}),
                                 Info("present.0.value", ElementType::kFloat32, {"4*batch", "past_seq+seq", "16"})};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->cache.size(), 2u);
  EXPECT_EQ(s->cache[0].seq_axis, 2);
  EXPECT_EQ(s->cache[1].seq_axis, 1);
  // A batch named as a multiple of the past's own is not the growing axis.
  std::vector<TensorInfo> in2 = {Ids(),
                                 Info("past_key_values.0.key", ElementType::kFloat32, {"batch", "16", "past_seq"})};
  std::vector<TensorInfo> out2 = {Logits(),
                                  Info("present.0.key", ElementType::kFloat32, {"4*batch", "16", "past_seq+seq"})};
  auto s2 = FindSignature(in2, out2, nullptr, {}, true);
  ASSERT_TRUE(s2.ok()) << s2.status();
  EXPECT_EQ(s2->cache[0].seq_axis, 2);
}

TEST(SignatureTest, CacheAxisIsTheLengthNamedInBothNotADimTorchCouldNotInfer) {
  // Falcon's export: the presents' head dims are named by torch
  // ("Reshapepresent.0.key_dim_1") where the past has 1.
  std::vector<TensorInfo> in = {Ids(), Info("past_key_values.0.key", ElementType::kFloat32, {"batch", "1", "past_seq", "16"})};
  std::vector<TensorInfo> out = {Logits(), Info("present.0.key", ElementType::kFloat32,
                                                {"batch", "Reshapepresent.0.key_dim_1", "total_seq", "Reshapepresent.0.key_dim_3"})};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->cache.size(), 1u);
  EXPECT_EQ(s->cache[0].seq_axis, 2);
}

TEST(SignatureTest, EncoderCacheOfASeq2SeqDecoderIsNotPaired) {
  // A T5 decoder with past: the decoder's cache grows, the encoder's keys and
  // values are read as they are and have no present.
  auto kv = [](const std::string& n, const std::string& seq) {
    return Info(n, ElementType::kFloat32, {"batch", "4", seq, "16"});
  };
  std::vector<TensorInfo> in = {Ids(), Info("attention_mask", ElementType::kInt64, {"batch", "total_seq"}),
                                Info("encoder_attention_mask", ElementType::kInt64, {"batch", "enc_seq"})};
  std::vector<TensorInfo> out = {Logits()};
  for (const char* kind : {"key", "value"}) {
    in.push_back(kv(std::string("past_key_values.0.decoder.") + kind, "past_seq"));
    in.push_back(kv(std::string("past_key_values.0.encoder.") + kind, "enc_seq"));
    out.push_back(kv(std::string("present.0.decoder.") + kind, "total_seq"));
  }
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Pairs(*s), (std::vector<std::pair<std::string, std::string>>{
                           {"past_key_values.0.decoder.key", "present.0.decoder.key"},
                           {"past_key_values.0.decoder.value", "present.0.decoder.value"}}));
  EXPECT_EQ(s->encoder_cache,
            (std::vector<std::string>{"past_key_values.0.encoder.key", "past_key_values.0.encoder.value"}));
  EXPECT_EQ(s->attention_mask, "attention_mask");
  // Without the encoder's names an unpaired past is still a mismatch.
  in.push_back(kv("past_key_values.1.key", "past_seq"));
  EXPECT_FALSE(FindSignature(in, out, nullptr, {}, true).ok());
}

TEST(SignatureTest, NamesWithoutHintsPairByShape) {
  std::vector<TensorInfo> in = {Ids("tokens"), Kv("k_in_0", "a"), Kv("v_in_0", "a")};
  std::vector<TensorInfo> out = {Info("scores", ElementType::kFloat32, {"batch", "seq", "100"}), Kv("k_out_0", "b"),
                                 Kv("v_out_0", "b")};
  auto s = FindSignature(in, out, nullptr, {}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->input_ids, "tokens");
  EXPECT_EQ(s->logits, "scores");
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Pairs(*s), (std::vector<P>{{"k_in_0", "k_out_0"}, {"v_in_0", "v_out_0"}}));
}

TEST(SignatureTest, MismatchedShapesAreRefused) {
  std::vector<TensorInfo> in = {Ids(), Kv("past_key_0", "p")};
  std::vector<TensorInfo> out = {Logits(), Info("present_key_0", ElementType::kFloat32, {"batch", "8", "t", "64"})};
  auto s = FindSignature(in, out, nullptr, {}, true);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("differ"), std::string::npos) << s.status();
}

TEST(SignatureTest, OverridesWin) {
  std::vector<TensorInfo> in = {Ids("a"), Ids("b"), Kv("past_key_0", "p"), Kv("past_value_0", "p")};
  std::vector<TensorInfo> out = {Logits(), Kv("present_key_0", "t"), Kv("present_value_0", "t")};
  // Swapped on purpose: the override is taken as given.
  auto s =
      FindSignature(in, out, nullptr,
                    {{"input_ids", "b"}, {"past_key_0", "present_value_0"}, {"past_value_0", "present_key_0"}}, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->input_ids, "b");
  EXPECT_EQ(s->cache[0].present, "present_value_0");
  auto bad = FindSignature(in, out, nullptr, {{"past_key_9", "present_key_0"}}, true);
  EXPECT_NE(bad.status().message().find("no input"), std::string::npos) << bad.status();
}

TEST(SignatureTest, NotADecoder) {
  auto no_ids = FindSignature({Info("x", ElementType::kFloat32, {"b", "t", "64"})},
                              {Info("y", ElementType::kFloat32, {"b", "t", "64"})}, nullptr, {}, true);
  EXPECT_NE(no_ids.status().message().find("not a decoder"), std::string::npos) << no_ids.status();
  auto no_cache = FindSignature({Ids()}, {Logits()}, nullptr, {}, true);
  EXPECT_NE(no_cache.status().message().find("no past/present"), std::string::npos) << no_cache.status();
  // The same graph read as a prefill graph needs presents.
  auto no_presents = FindSignature({Ids()}, {Logits()}, nullptr, {}, false);
  EXPECT_NE(no_presents.status().message().find("no present"), std::string::npos) << no_presents.status();
  auto prefill = FindSignature({Ids()}, {Logits(), Kv("present.0.key", "seq")}, nullptr, {}, false);
  ASSERT_TRUE(prefill.ok()) << prefill.status();
  EXPECT_TRUE(prefill->cache[0].past.empty());
}

}  // namespace
}  // namespace attune
