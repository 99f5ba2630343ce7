// ReadSecretFile / CheckSecretText (engine/common/secret_file.h): the one reader of
// token files, used by the coordinator, the CLI and the agent. The "token file is a
// directory" fix had to land three times before there was one.
#include "engine/common/secret_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetmark-secret-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(SecretFileTest, TheTokenIsTrimmed) {
  absl::StatusOr<std::string> token = ReadSecretFile("--token_file", Write("token", "  tok-123 \n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "tok-123");
  token = ReadSecretFile("--token_file", Write("longest", std::string(kMaxSecretBytes, 'a') + "\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(token->size(), kMaxSecretBytes);
}

TEST_F(SecretFileTest, EveryProblemNamesWhereThePathCameFromAndThePath) {
  const std::string empty = Write("empty", " \n");
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  struct Case {
    std::string path;
    absl::StatusCode code;
    std::string says;
  };
  const Case cases[] = {
      {dir_ + "/missing", absl::StatusCode::kNotFound, "cannot read: No such file or directory"},
      {dir_, absl::StatusCode::kInvalidArgument, "is a directory"},  // and "(a directory)"
      {fifo, absl::StatusCode::kInvalidArgument, "is not a regular file (a FIFO)"},
      {empty, absl::StatusCode::kInvalidArgument, "is empty; it must hold the token"},
      {Write("non_ascii", "caf\xc3\xa9\n"), absl::StatusCode::kInvalidArgument, "holds byte 0xc3 at offset 3"},
      {Write("escape", "ab\x1b[2Jcd"), absl::StatusCode::kInvalidArgument, "holds byte 0x1b at offset 2"},
      {Write("spaced", "two words"), absl::StatusCode::kInvalidArgument, "visible ASCII (0x21..0x7e, no spaces)"},
      {Write("huge", std::string(20000, 'a')), absl::StatusCode::kInvalidArgument, "holds 20000 bytes"},
      {Write("enormous", std::string(200000, 'a')), absl::StatusCode::kInvalidArgument, "holds more than 65536 bytes"},
  };
  for (const Case& c : cases) {
    // As the CLI reads its admin token: the file, then the header-value rule.
    absl::StatusOr<std::string> token = ReadSecretFile("--admin_token_file", c.path);
    if (token.ok()) {
      if (absl::Status header = CheckSecretText("--admin_token_file: \"" + c.path + "\"", *token); !header.ok()) {
        token = header;
      }
    }
    ASSERT_FALSE(token.ok()) << c.path;
    EXPECT_EQ(token.status().code(), c.code) << token.status();
    const std::string message(token.status().message());
    EXPECT_THAT(message, HasSubstr("--admin_token_file: \"" + c.path + "\"")) << message;
    EXPECT_THAT(message, HasSubstr(c.says)) << message;
    EXPECT_THAT(message, Not(HasSubstr("aaaaaaaa"))) << "the token is quoted";
    EXPECT_THAT(message, Not(HasSubstr("words"))) << "the token is quoted";
  }
  // The coordinator's tests match these too: the directory says "(a directory)".
  EXPECT_THAT(std::string(ReadSecretFile("--x", dir_).status().message()), HasSubstr("(a directory)"));
  EXPECT_THAT(std::string(ReadSecretFile("--x", empty, "the admin token").status().message()),
              HasSubstr("--x: \"" + empty + "\" is empty; it must hold the admin token"));
}

// The agent's enrollment token is judged by the hello's text rules, not here.
TEST_F(SecretFileTest, ReadingDoesNotJudgeTheBytes) {
  absl::StatusOr<std::string> token = ReadSecretFile("token_file", Write("escape", "tok\x1b[1Aen\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "tok\x1b[1Aen");
}

TEST(CheckSecretTextTest, NamesTheSecretNeverQuotesIt) {
  EXPECT_TRUE(CheckSecretText("http bearer token", "abc-DEF_123~").ok());
  const absl::Status space = CheckSecretText("http bearer token", "abc def");
  EXPECT_TRUE(absl::IsInvalidArgument(space));
  EXPECT_EQ(space.message(),
            "http bearer token holds byte 0x20 at offset 3; a token is visible ASCII (0x21..0x7e, no spaces)");
  EXPECT_THAT(std::string(CheckSecretText("t", std::string(4097, 'x')).message()), HasSubstr("holds 4097 bytes"));
}

}  // namespace
}  // namespace fleetmark
