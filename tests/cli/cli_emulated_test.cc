// Results measured under user-mode emulation through the real `fleetmark` binary,
// a real coordinator (on the in-memory store): an emulated agent (qemu-user) and a native one,
// registered and given results through the coordinator's Store (the path agents'
// results take). agents list, runs show and export mark them; compare leaves them out
// unless --include_emulated.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "coordinator/store/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_store_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;
namespace store = fleetmark::store;
namespace v1 = fleetmark::v1;

class CliEmulatedTest : public CliStoreTest {
 protected:
  void SetUp() override {
    CliStoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::string qemu = Register("qemu-arm64", Host("aarch64", true));
    const std::string native = Register("x86-host", Host("x86_64", false));
    std::vector<store::ClaimedJob> claimed;
    run_id_ = CreateClaimedRun("emu", {qemu, native}, 2, &claimed);
    ASSERT_EQ(claimed.size(), 2u);
    std::vector<v1::CaseResult> results;
    std::vector<std::string> agents;
    int n = 0;
    for (const store::ClaimedJob& job : claimed) {
      for (const char* strategy : {"direct", "single_thread"}) {
        results.push_back(BatchResult(++n, job, strategy, job.agent_id == qemu ? 9e6 : 1e6));
        agents.push_back(job.agent_id);
      }
    }
    ASSERT_NO_FATAL_FAILURE(Insert(results, agents));
  }

  static v1::HostInfo Host(const std::string& arch, bool emulated) {
    v1::HostInfo host;
    host.set_arch(arch);
    host.set_cpu_model(emulated ? "AMD EPYC" : "Intel Xeon");
    host.set_emulated(emulated);
    if (emulated) host.set_emulation_evidence("binary aarch64, uname aarch64, /proc/cpuinfo x86");
    return host;
  }

  std::string run_id_;
};

// The line of `text` holding `what`.
TEST_F(CliEmulatedTest, AgentsListRunsShowAndExportMarkEmulatedResults) {
  CliResult agents = Fleet("agents list");
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_THAT(LineWith(agents.out, "qemu-arm64"), HasSubstr("aarch64 (emulated)"));
  EXPECT_THAT(LineWith(agents.out, "x86-host"), Not(HasSubstr("emulated")));

  CliResult show = Fleet("runs show " + run_id_);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(LineWith(show.out, "== agent qemu-arm64"),
              HasSubstr("EMULATED (qemu-user): 2 of 2 results are the emulator's numbers, not hardware numbers"));
  EXPECT_THAT(LineWith(show.out, "== agent x86-host"), Not(HasSubstr("EMULATED")));
  // The results table's own heading (engine/report, also local mode's) says it once.
  EXPECT_EQ(Count(show.out, "EMULATED (qemu-user): the emulator's numbers, not hardware numbers"), 1u) << show.out;

  CliResult csv = Fleet("export " + run_id_ + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> lines = absl::StrSplit(csv.out, '\n', absl::SkipEmpty());
  for (std::string& line : lines) absl::StripTrailingAsciiWhitespace(&line);  // CSV ends lines in CRLF
  ASSERT_EQ(lines.size(), 5u) << csv.out;
  EXPECT_TRUE(absl::EndsWith(lines[0], ",emulated")) << lines[0];
  for (size_t i = 1; i < lines.size(); ++i) {
    const bool qemu = absl::StartsWith(lines[i], "qemu-arm64,");
    EXPECT_TRUE(absl::EndsWith(lines[i], qemu ? ",true" : ",false")) << lines[i];
  }

  CliResult json = Fleet("export " + run_id_ + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  int emulated = 0;
  for (const auto& device : parsed["devices"]) {
    if (device["agent"] == "qemu-arm64") EXPECT_EQ(device["host"]["emulated"], true);
    for (const auto& r : device["results"]) emulated += r.value("emulated", false) ? 1 : 0;
  }
  EXPECT_EQ(emulated, 2) << json.out;
}

TEST_F(CliEmulatedTest, CompareLeavesEmulatedResultsOutUnlessAsked) {
  CliResult refused = Fleet("compare " + run_id_ + " --agents x86-host,qemu-arm64");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_THAT(refused.err,
              HasSubstr("\"qemu-arm64\" measured its results in run " + run_id_ + " under user-mode emulation"));
  EXPECT_THAT(refused.err, HasSubstr("--include_emulated"));
  EXPECT_EQ(refused.out, "");

  CliResult kept = Fleet("compare " + run_id_ + " --agents x86-host,qemu-arm64 --include_emulated");
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_THAT(kept.out, HasSubstr("qemu-arm64 (emulated) median [95% CI]"));
  EXPECT_THAT(kept.out, HasSubstr("x86-host median [95% CI]"));
  EXPECT_THAT(LineWith(kept.out, "batch/arithmetic/blocking/direct/any"), HasSubstr("9.00x"));

  // Spaces around the items of --agents are trimmed: the same comparison.
  CliResult spaced = Fleet("compare " + run_id_ + " --agents ' x86-host , qemu-arm64' --include_emulated");
  ASSERT_EQ(spaced.exit_code, 0) << spaced.err;
  EXPECT_EQ(spaced.out, kept.out);
}

}  // namespace
