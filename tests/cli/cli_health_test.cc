// Fleet health through the real `fleetmark` binary and a real coordinator (in-memory store):
// calibration nights injected through the coordinator's Store (the path agents'
// results take) give an agent a noise score and, when its newest night drifts, a
// quarantine that `agents list` shows and `agents release` ends.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "engine/topology/fingerprint.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_store_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;
namespace store = fleetmark::store;
namespace v1 = fleetmark::v1;

class CliHealthTest : public CliStoreTest {
 protected:
  // One night of the calibration block on `agent`, at `factor` × the base medians,
  // measured under `kernel` (the device fingerprint's kernel; "" = no fingerprint).
  void Night(const std::string& agent, double factor, const std::string& kernel = "") {
    std::vector<store::ClaimedJob> claimed;
    CreateClaimedRun("nightly", {agent}, 3, &claimed);
    ASSERT_EQ(claimed.size(), 1u);
    std::vector<v1::CaseResult> results;
    for (const auto& [label, base] : std::vector<std::pair<std::string, double>>{
             {"calibration_direct", 8e3}, {"calibration_single_thread", 60e3}, {"calibration_fixed_pool_2", 30e3}}) {
      v1::CaseResult r = BatchResult(next_id_++, claimed[0], label, base * factor);
      r.mutable_spec()->mutable_strategy()->set_label(label);
      if (!kernel.empty()) {
        v1::HostInfo host;
        host.set_arch("aarch64");
        host.set_kernel(kernel);
        *r.mutable_fingerprint() = fleetmark::engine::DeviceFingerprintOf(host);
      }
      results.push_back(r);
    }
    Insert(results, std::vector<std::string>(results.size(), agent));
    ASSERT_TRUE(store_->FinishJob(claimed[0].assignment.job_id(), agent, store::JobOutcome{.ok = true}).ok());
  }
  int next_id_ = 1;
};

TEST_F(CliHealthTest, AgentsListShowsNoiseAndQuarantineAndReleaseEndsIt) {
  v1::HostInfo host;
  host.set_arch("aarch64");
  const std::string board = Register("board", host);
  Register("quiet", host);
  for (double factor : {1.0, 1.01, 0.99, 1.005, 0.995, 1.0}) ASSERT_NO_FATAL_FAILURE(Night(board, factor));
  CliResult list = Fleet("agents list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("noise"));
  EXPECT_THAT(list.out, HasSubstr("health"));
  EXPECT_THAT(list.out, HasSubstr("0.7% (6 nights)"));
  EXPECT_THAT(list.out, Not(HasSubstr("quarantined")));

  ASSERT_NO_FATAL_FAILURE(Night(board, 1.4));  // 40 % slower: calibration drift
  list = Fleet("agents list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("quarantined"));
  EXPECT_THAT(list.out, HasSubstr("calibration drift: the newest night is 40.0 % slower than the median of its 6 "
                                  "earlier nights"));
  EXPECT_THAT(list.out, HasSubstr("0.7% (7 nights)"));
  // The board's row is quarantined, the quiet agent's is ok with no score yet.
  const std::vector<std::string> lines = absl::StrSplit(list.out, '\n');
  for (const std::string& line : lines) {
    if (line.rfind("board ", 0) == 0) EXPECT_THAT(line, HasSubstr("quarantined"));
    if (line.rfind("quiet ", 0) == 0) {
      EXPECT_THAT(line, HasSubstr(" ok "));
      EXPECT_THAT(line, Not(HasSubstr("quarantined")));
    }
  }
  CliResult only = Fleet("agents list --select health=quarantined");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_THAT(only.out, HasSubstr("board"));
  EXPECT_THAT(only.out, Not(HasSubstr("quiet")));
  CliResult bad = Fleet("agents list --select health=sick");
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("health is ok, quarantined or any, got \"sick\""));

  CliResult usage = Fleet("agents release");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("agents release takes one agent name"));
  CliResult released = Fleet("agents release board");
  ASSERT_EQ(released.exit_code, 0) << released.err;
  EXPECT_THAT(released.out, HasSubstr("released agent board from quarantine"));
  EXPECT_THAT(released.out, HasSubstr("calibration drift"));
  list = Fleet("agents list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, Not(HasSubstr("quarantined")));
  CliResult again = Fleet("agents release board");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("agent \"board\" is not quarantined"));
  CliResult unknown = Fleet("agents release nobody");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("agent \"nobody\" not found"));
}

// A kernel update changes the device fingerprint: the calibration history starts over
// there (as History's segments do), so the slower nights after it are not a drift.
TEST_F(CliHealthTest, AFingerprintChangeStartsTheCalibrationHistoryOver) {
  v1::HostInfo host;
  host.set_arch("aarch64");
  const std::string board = Register("board", host);
  for (double factor : {1.0, 1.01, 0.99, 1.005, 0.995}) ASSERT_NO_FATAL_FAILURE(Night(board, factor, "6.1.0-18"));
  for (double factor : {1.4, 1.41, 1.39, 1.4}) ASSERT_NO_FATAL_FAILURE(Night(board, factor, "6.1.0-21"));
  CliResult list = Fleet("agents list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, Not(HasSubstr("quarantined"))) << list.out;
  EXPECT_THAT(list.out, HasSubstr("(4 nights)")) << list.out;  // only the new kernel's nights
  // Within the new fingerprint's history a drift still quarantines.
  ASSERT_NO_FATAL_FAILURE(Night(board, 1.4 * 1.5, "6.1.0-21"));
  list = Fleet("agents list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("calibration drift: the newest night is 50.0 % slower than the median of its 4 "
                                  "earlier nights"))
      << list.out;
}

}  // namespace
