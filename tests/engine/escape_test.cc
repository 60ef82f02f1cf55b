// Escaping of names in messages: control characters become escapes, the
// rest (UTF-8 included) stays, and escaping twice changes nothing.
#include "core/common/escape.h"

#include "gtest/gtest.h"

namespace attune {
namespace {

TEST(EscapeTest, ControlCharacters) {
  EXPECT_EQ(EscapeControl("a\r\nb\tc"), "a\\r\\nb\\tc");
  EXPECT_EQ(EscapeControl(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(EscapeControl("\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
  EXPECT_EQ(EscapeControl("plain/name:0 \xc3\xa9"), "plain/name:0 \xc3\xa9");
  EXPECT_EQ(QuoteName("a\nb"), "'a\\nb'");
}

TEST(EscapeTest, Idempotent) {
  const std::string once = EscapeControl("line\r\nbreak\\n");
  EXPECT_EQ(EscapeControl(once), once);
}

}  // namespace
}  // namespace attune
