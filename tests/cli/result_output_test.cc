// Unit tests of ResultOutput (coordinator/cli/result_output.h): what --out does when the
// last step, renaming the complete temporary file over the path, fails.
#include "coordinator/cli/result_output.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fleetmark::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ResultOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("result_output_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// The path turns into a non-empty directory between Open and WriteAll: rename() fails
// (EISDIR/ENOTEMPTY). The finished results must survive in the temporary file the error
// names, never be deleted.
TEST_F(ResultOutputTest, KeepsTheCompleteResultsWhenTheRenameFails) {
  const fs::path out = dir_ / "results.json";
  absl::StatusOr<ResultOutput> output = ResultOutput::Open(out.string(), "");
  ASSERT_TRUE(output.ok()) << output.status();
  fs::create_directories(out / "occupied");
  const absl::Status written = output->WriteAll("{\"results\": [1, 2, 3]}\n");
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.message(), HasSubstr("--out: cannot replace " + out.string()));
  const std::string marker = "the complete results are kept in ";
  const size_t at = std::string(written.message()).find(marker);
  ASSERT_NE(at, std::string::npos) << written.message();
  const fs::path kept = std::string(written.message()).substr(at + marker.size());
  EXPECT_EQ(kept.parent_path(), dir_);
  EXPECT_EQ(ReadFile(kept), "{\"results\": [1, 2, 3]}\n");
}

// The ordinary case still replaces the file and leaves no temporary file behind.
TEST_F(ResultOutputTest, ReplacesTheFileAndLeavesNoTemporaryFile) {
  const fs::path out = dir_ / "results.csv";
  std::ofstream(out) << "old\n";
  absl::StatusOr<ResultOutput> output = ResultOutput::Open(out.string(), "");
  ASSERT_TRUE(output.ok()) << output.status();
  ASSERT_TRUE(output->WriteAll("new\n").ok());
  EXPECT_EQ(ReadFile(out), "new\n");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace fleetmark::cli
