// .npy parsing: round trips, and every malformed or hostile file an error,
// never a crash (this suite runs under the sanitizers).
#include "engine/io/npy.h"

#include <random>

#include "gtest/gtest.h"

namespace attune {
namespace {

std::string GoodNpy() {
  Tensor t = *Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  return *SerializeNpy(t);
}

std::string Replaced(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(Npy, RoundTripsEveryElementType) {
  for (ElementType type : {ElementType::kFloat32, ElementType::kFloat64, ElementType::kFloat16, ElementType::kInt8,
                           ElementType::kUint8, ElementType::kInt32, ElementType::kInt64, ElementType::kBool}) {
    Tensor t = *Tensor::Create(type, {3, 4});
    for (size_t i = 0; i < t.byte_size(); ++i) static_cast<uint8_t*>(t.raw_data())[i] = type == ElementType::kBool ? i % 2 : i;
    auto bytes = SerializeNpy(t);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    auto back = ParseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << ElementTypeName(type) << ": " << back.status();
    EXPECT_EQ(back->type(), type);
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(std::string(static_cast<const char*>(back->raw_data()), back->byte_size()),
              std::string(static_cast<const char*>(t.raw_data()), t.byte_size()));
  }
}

TEST(Npy, MalformedFilesAreErrors) {
  const std::string good = GoodNpy();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"garbage", "this is not a numpy file at all"},
      {"magic only", good.substr(0, 6)},
      {"truncated header", good.substr(0, 20)},
      {"truncated data", good.substr(0, good.size() - 4)},
      {"bad magic", "\x92" + good.substr(1)},
      {"complex dtype", Replaced(good, "<f4", "<c8")},
      {"big-endian", Replaced(good, "<f4", ">f4")},
      {"fortran order", Replaced(good, "False", "True ")},
      {"negative dim", Replaced(good, "(2, 3)", "(-2, 3)")},
      {"overflowing shape", Replaced(good, "(2, 3)", "(99999999999, 99999999999)")},
      {"unclosed shape", Replaced(good, "(2, 3)", "(2, 3 ")},
      {"header length past the end", [&] {
         std::string s = good;
         s[8] = '\xff';
         s[9] = '\x7f';
         return s;
       }()},
  };
  for (const auto& [name, bytes] : cases) {
    auto parsed = ParseNpy(bytes);
    EXPECT_FALSE(parsed.ok()) << name;
    if (!parsed.ok()) EXPECT_NE(parsed.status().code(), absl::StatusCode::kInternal) << name << ": " << parsed.status();
  }
}

// Found by fuzz/npy_fuzz.cc: the dtype was quoted raw, so a newline in it broke the message.
TEST(Npy, ControlCharactersInTheDtypeAreEscaped) {
  const std::string good = GoodNpy();
  for (const std::string& descr : {std::string("<\nx4"), std::string(">\r4"), std::string("\x01")}) {
    auto parsed = ParseNpy(Replaced(good, "<f4", descr));
    ASSERT_FALSE(parsed.ok()) << descr;
    for (const char c : std::string(parsed.status().message()))
      EXPECT_GE(static_cast<unsigned char>(c), 0x20) << parsed.status();
  }
}

TEST(Npy, SizeLimitIsEnforced) {
  auto parsed = ParseNpy(GoodNpy(), /*max_bytes=*/16);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kResourceExhausted) << parsed.status();
}

TEST(Npy, RandomMutationsNeverCrash) {
  const std::string good = GoodNpy();
  std::mt19937 rng(42);
  for (int i = 0; i < 2000; ++i) {
    std::string s = good;
    const int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) s[rng() % s.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) s.resize(rng() % s.size());
    auto parsed = ParseNpy(s);
    if (parsed.ok()) EXPECT_LE(parsed->byte_size(), s.size());
  }
}

}  // namespace
}  // namespace attune
