// Results measured under user-mode emulation through the real `fleetmark` binary,
// a real coordinator and PostgreSQL: an emulated agent (qemu-user) and a native one,
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
#include "tests/cli/cli_fleet_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;
namespace store = fleetmark::store;
namespace v1 = fleetmark::v1;

class CliEmulatedTest : public CliFleetTest {
 protected:
  void SetUp() override {
    CliFleetTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store::StoreOptions options;
    options.connection.uri = db_->uri();
    auto opened = store::Store::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = *std::move(opened);
    ASSERT_TRUE(store_->Migrate().ok());
    const std::string qemu = Register("qemu-arm64", "aarch64", true);
    const std::string native = Register("x86-host", "x86_64", false);
    store::NewRun run;
    run.plan.set_name("emu");
    run.agent_ids = {qemu, native};
    run.cases_total = 2;
    auto created = store_->CreateRun(run);
    ASSERT_TRUE(created.ok()) << created.status();
    run_id_ = created->run_id();
    auto claimed = store_->ClaimJobs({qemu, native}, absl::Hours(1));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ASSERT_EQ(claimed->size(), 2u);
    std::vector<v1::CaseResult> results;
    int n = 0;
    for (const store::ClaimedJob& job : *claimed) {
      for (const char* strategy : {"direct", "single_thread"}) {
        v1::CaseResult& r = results.emplace_back();
        r.set_result_id(absl::StrFormat("00000000-0000-4000-8000-%012d", ++n));
        r.set_job_id(job.assignment.job_id());
        r.mutable_spec()->mutable_strategy()->set_name(strategy);
        r.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/blocking/", strategy, "/any"));
        r.mutable_spec()->set_scenario("batch");
        r.mutable_spec()->set_workload("arithmetic");
        r.mutable_spec()->set_io_mode("blocking");
        r.mutable_spec()->set_placement("any");
        r.set_status(v1::CASE_STATUS_OK);
        r.mutable_stats()->set_count(3);
        r.mutable_stats()->set_median_ns(job.agent_id == qemu ? 9e6 : 1e6);
        r.mutable_stats()->set_ci_low_ns(job.agent_id == qemu ? 8.9e6 : 0.99e6);
        r.mutable_stats()->set_ci_high_ns(job.agent_id == qemu ? 9.1e6 : 1.01e6);
      }
    }
    std::vector<store::Store::AgentResult> batch;
    for (size_t i = 0; i < results.size(); ++i) batch.push_back({(*claimed)[i / 2].agent_id, &results[i]});
    auto stored = store_->InsertResults(batch);
    ASSERT_TRUE(stored.ok()) << stored.status();
    for (const auto& o : *stored) ASSERT_TRUE(o.stored) << o.message;
  }

  std::string Register(const std::string& name, const std::string& arch, bool emulated) {
    store::AgentRegistration reg;
    reg.name = name;
    reg.credential_sha256 = std::string(64, 'a');
    reg.host.set_arch(arch);
    reg.host.set_cpu_model(emulated ? "AMD EPYC" : "Intel Xeon");
    reg.host.set_emulated(emulated);
    if (emulated) reg.host.set_emulation_evidence("binary aarch64, uname aarch64, /proc/cpuinfo x86");
    reg.session_id = "s-" + name;
    auto id = store_->RegisterAgent(reg);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : "";
  }

  std::unique_ptr<store::Store> store_;
  std::string run_id_;
};

// The line of `text` holding `what`.
std::string LineWith(const std::string& text, const std::string& what) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find(what) != absl::string_view::npos) return std::string(line);
  }
  return "";
}

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
  EXPECT_EQ(parsed["hosts"]["qemu-arm64"]["emulated"], true);
  int emulated = 0;
  for (const auto& r : parsed["results"]) emulated += r.value("emulated", false) ? 1 : 0;
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
