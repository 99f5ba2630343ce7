#include "agent/credential_store.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

class CredentialStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetmark-cred-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CredentialStoreTest, SaveLoadForget) {
  auto none = LoadCredential(dir_);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(SaveCredential(dir_, {"agent-7", "s3cret"}).ok());
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/credential").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = LoadCredential(dir_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->has_value());
  EXPECT_EQ((*loaded)->agent_id, "agent-7");
  EXPECT_EQ((*loaded)->credential, "s3cret");

  ASSERT_TRUE(ForgetCredential(dir_).ok());
  ASSERT_TRUE(ForgetCredential(dir_).ok());
  EXPECT_FALSE(LoadCredential(dir_)->has_value());
}

TEST_F(CredentialStoreTest, MalformedFilesAndValuesAreErrors) {
  EXPECT_TRUE(absl::IsInvalidArgument(SaveCredential(dir_, {"a", "two\nlines"})));
  EXPECT_TRUE(absl::IsInvalidArgument(SaveCredential(dir_, {"", "x"})));
  std::ofstream(dir_ + "/credential") << "garbage\n";
  EXPECT_TRUE(absl::IsInternal(LoadCredential(dir_).status()));
}

}  // namespace
}  // namespace fleetmark::agent
