// ValidateAgentOptions (agent/agent.h): what it says about a bad option may be echoed
// to a terminal, so what the user typed is escaped in it.
#include <string>

#include "agent/agent.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

AgentOptions Options(const std::string& name) {
  AgentOptions options;
  options.coordinator = "127.0.0.1:7443";
  options.name = name;
  options.spool_dir = "/tmp/unused";
  return options;
}

TEST(AgentOptionsTest, GoodOptionsPass) { EXPECT_TRUE(ValidateAgentOptions(Options("pixel-7")).ok()); }

// A trial found a hostile --name echoed raw: escape sequences drove the terminal and
// U+202E (right-to-left override) reversed the rest of the line.
TEST(AgentOptionsTest, AHostileNameIsEscapedInTheError) {
  const absl::Status escape = ValidateAgentOptions(Options("\x1b]0;pwned\x07\x1b[2J"));
  ASSERT_TRUE(absl::IsInvalidArgument(escape)) << escape;
  const std::string message(escape.message());
  EXPECT_THAT(message, HasSubstr("name: 1 to 64 characters of [A-Za-z0-9._-]"));
  EXPECT_THAT(message, HasSubstr("\\x1b]0;pwned\\x07\\x1b[2J"));
  for (unsigned char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw byte " << int(c) << " in " << message;

  const absl::Status bidi = ValidateAgentOptions(Options("agent\u202egnp.exe"));
  ASSERT_TRUE(absl::IsInvalidArgument(bidi)) << bidi;
  EXPECT_THAT(std::string(bidi.message()), HasSubstr("agent\\u202egnp.exe"));
  EXPECT_THAT(std::string(bidi.message()), Not(HasSubstr("\u202e")));
}

}  // namespace
}  // namespace fleetmark::agent
