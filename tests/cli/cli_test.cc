// `fleetmark` end to end: bad input exits 2 with one clear message naming the field;
// a tiny plan runs in every output format and each parses back; the fleet commands
// (tokens list/revoke, a cancelled run) against a real fleetmark-coordinator on the
// in-memory store, and those that insert rows with SQL (run id prefixes, agents' text)
// on a real PostgreSQL (FLEETMARK_TEST_PG_URI).
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "tests/cli/cli_fixture.h"
#include "tests/cli/cli_fleet_fixture.h"
#include "tests/integration/fleet_harness.h"
#include "engine/report/csv.h"
#include "engine/report/json.h"
#include "gmock/gmock.h"
#include "engine/topology/fingerprint.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CliTest, UsageAndHelp) {
  CliResult r = Cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("commands:"));

  r = Cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"run", "plan validate", "list", "--format", "--out", "--filter", "--quick"}) {
    EXPECT_THAT(r.out, HasSubstr(word));
  }
  r = Cli("plan");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs a subcommand"));
  EXPECT_THAT(r.err, HasSubstr("fleetmark plan validate PLAN"));

  r = Cli("help run");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("fleetmark run PLAN"));
}

TEST_F(CliTest, UnknownCommandOrFlagExits2) {
  CliResult r = Cli("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command \"frobnicate\""));
  // What the user typed is escaped, never echoed raw to the terminal.
  r = Cli("\"$(printf 'x\\033[2J')\"");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command \"x\\x1b[2J\""));
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  r = Cli("runs show \"$(printf 'x\\033]0;pwn\\007')\" --coordinator 127.0.0.1:1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;

  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  r = Cli("run " + plan.string() + " --no_such_flag=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --no_such_flag=1"));

  // A port out of range is refused before dialling (gRPC would wrap it round).
  r = Cli("agents list --coordinator 127.0.0.1:99999");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("1..65535"));
  // The agent's rule for the host too (one CheckDialAddress): bad usage, not a failed
  // connection (exit 1), and what was typed is shown escaped.
  for (const char* bad : {"\"$(printf 'x\\033[31m:1')\"", "'a b:1'", "127.0.0.1:+80", "dns:///:1", "unix:"}) {
    r = Cli(std::string("agents list --coordinator ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("--coordinator: expected IP:PORT")) << bad;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  }

  r = Cli("run " + plan.string() + " --format=xml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--format"));
  EXPECT_THAT(r.err, HasSubstr("xml"));
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliTest, BadPlansExit2NamingTheField) {
  CliResult r = Cli("plan validate " + (dir_ / "missing.txtpb").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.txtpb"));
  EXPECT_THAT(r.err, HasSubstr("No such file"));

  fs::path p = Write("syntax.txtpb", "name: \"x\"\nmatrix {\n  strategies { nme: \"direct\" }\n}\n");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("syntax.txtpb:3:"));
  EXPECT_THAT(r.err, HasSubstr("nme"));

  p = Write("threads.txtpb",
            "matrix {\n  strategies { name: \"fixed_pool\" threads: 20000 }\n"
            "  workloads: \"arithmetic\"\n  batch {}\n}\n");
  r = Cli("run " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("threads.txtpb:2:35: plan.matrix[0].strategies[0].threads: "
                               "0 <= threads <= 10000, got 20000"));
  EXPECT_TRUE(r.out.empty());  // nothing ran

  p = Write("name.txtpb", "matrix { strategies { name: \"nope\" } workloads: \"arithmetic\" batch {} }");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.matrix[0].strategies[0].name: one of direct"));

  p = Write("tasks.json",
            R"({"matrix": [{"strategies": [{"name": "direct"}], "workloads": ["network"],
                "batch": {"tasks": 2000000}}]})");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.matrix[0].batch.tasks: 0 <= tasks <= 1000000, got 2000000"));

  // protobuf's "Integer out of range" becomes the field's own range (finding 8).
  p = Write("huge.txtpb",
            "name: \"h\"\nmatrix {\n  strategies { name: \"direct\" }\n  workloads: \"arithmetic\"\n"
            "  batch { tasks: 1000000000000 }\n}\n");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.matrix[0].batch.tasks: 0 <= tasks <= 1000000, got 1000000000000"));

  // A fan-out runs no workload (finding 9; memory keeps accepting one as a name).
  p = Write("fanout.txtpb",
            "name: \"f\"\nmatrix {\n  strategies { name: \"thread_per_task\" }\n"
            "  workloads: [\"arithmetic\"]\n  fanout {}\n}\n");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.matrix[0].workloads[0]: this scenario runs no workload"));

  p = Write("negative.txtpb", std::string(kTinyPlan) + "quick { warmup_seconds: -2 }\n");
  r = Cli("run --quick " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.quick.warmup_seconds"));
  EXPECT_THAT(r.err, HasSubstr("got -2"));

  r = Cli("run " + Write("ok.txtpb", kTinyPlan).string() + " --filter='(bad'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--filter"));
}

TEST_F(CliTest, ValidatesTheS1Plan) {
  CliResult r = Cli("plan validate " + std::string(FLEETMARK_SOURCE_DIR) + "/plans/s1-frameworks.txtpb");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("180 cases"));
  // One case is "1 case" (trial of 2026-12-02, finding 9); every shipped plan is valid,
  // the nightly one included (its memory blocks carry no workloads).
  const fs::path one = Write("one.txtpb",
                             "name: \"one\"\nmatrix {\n  strategies { name: \"direct\" }\n"
                             "  workloads: \"arithmetic\"\n  batch {}\n}\n");
  r = Cli("plan validate " + one.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid plan \"one\": 1 case (1 with --quick)"));
  r = Cli("plan validate " + std::string(FLEETMARK_SOURCE_DIR) + "/plans/nightly.txtpb");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Issue 34, item 4: `plan validate` and `submit` tell what a plan costs per device
// (engine/plan/cost.h) and warn above an hour; the issue's plan (thread_per_task, 1 000 000
// tasks, 86 400 s per case, 1 000 rounds) was accepted without a word.
TEST_F(CliTest, PlanValidateAndSubmitTellTheCost) {
  const fs::path tiny = Write("tiny.txtpb", kTinyPlan);
  CliResult r = Cli("plan validate " + tiny.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // 4 contenders (two strategies on each workload) x 5.31 processes (racing from 3 to 16)
  // x (0.07 s to start one + 0.01 s warm-up + 0.5 s / 3 until the CI target may stop it)
  // = 4.4 s; worst 4 x (1 + 3 re-measures) x (16 x (0.2 + 0.1 + 0.01 + 2 R) + 2) = 112 s,
  // with R the storage waits a strategy cannot overlap (2.6 ms direct, 1.3 ms on 2 threads).
  EXPECT_THAT(r.out, HasSubstr("  duration: expected 4s, worst case 1m52s per device (4 batch cases x 3..16 processes "
                               "of 0.01 s warm-up + a 2 s budget per case)"));
  EXPECT_THAT(r.out, HasSubstr("  with --quick: expected 4s, worst case 1m02s per device (4 batch cases x 3..6"));
  EXPECT_EQ(r.err, "");
  const fs::path huge = Write("huge.txtpb", R"pb(name: "huge"
                                                 matrix {
                                                   strategies { name: "thread_per_task" }
                                                   workloads: [ "arithmetic" ]
                                                   batch { tasks: 1000000 }
                                                 }
                                                 measurement { max_seconds_per_case: 86400 rounds: 1000 })pb");
  r = Cli("plan validate " + huge.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;  // valid, and said to be long
  EXPECT_THAT(r.out, HasSubstr("expected 9m31s, worst case 96h53m per device (1 batch case x 1000 processes"));
  EXPECT_THAT(r.err, HasSubstr("fleetmark plan validate: warning: worst case 96h53m (expected 9m31s) is above 1h00m"));
  // submit says it before it sends anything (nothing listens at 127.0.0.1:1), for the
  // cases it submits: --filter keeps 2 of the 4, each alone on its point now (no racing:
  // 3 processes, worst 4 x (3 x 0.31 s + 2 s)).
  r = Cli("submit " + tiny.string() + " --select all --filter direct --coordinator 127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 5) << r.err;  // kExitUnavailable
  EXPECT_THAT(r.err, HasSubstr("fleetmark submit: expected 1s, worst case 24s per device (2 batch cases x 3..16"));
  r = Cli("submit " + huge.string() + " --select all --coordinator 127.0.0.1:1");
  EXPECT_THAT(r.err, HasSubstr("fleetmark submit: warning: worst case 96h53m"));
}

// Issue 34's trial (D1): direct with 100 000 tasks of 1 ms of synthetic CPU work said
// "expected 3s"; one repetition takes 100 s, above the 60 s bound on one repetition, so
// the case is stopped after it: the estimate is that repetition, and it is warned about.
TEST_F(CliTest, PlanValidateBoundsARepetitionByTheWorkItStates) {
  const fs::path slow = Write("slow.txtpb", R"pb(name: "slow"
                                                 matrix {
                                                   strategies { name: "direct" }
                                                   workloads: "synthetic"
                                                   synthetic { cpu_ns: 1000000 }
                                                   batch { tasks: 100000 }
                                                 })pb");
  CliResult r = Cli("plan validate " + slow.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Worst: the watchdog's 0.5 s warm-up + 10 s / 3 + 3 x 60 s, after a 0.2 s start.
  EXPECT_THAT(r.out, HasSubstr("  duration: expected 1m40s, worst case 3m04s per device"));
  EXPECT_THAT(r.err, HasSubstr("fleetmark plan validate: warning: 1 batch case cannot finish one repetition within "
                               "max(measurement.max_seconds_per_case, 60 s) = 1m00s (e.g. "
                               "batch/synthetic[cpu_ns=1000000]/blocking/direct/any: at least 1m40s with "));
}

// Issue 34, item 3: `runs cancel` 8 s into a fleet run kept 0 results ("19 cancelled, 37
// not run"). The agent of a cancelled job reports what it finished: the case that ended
// in round 1 (direct cannot wait suspending: unsupported) and, for the case it was
// measuring over 10 rounds, a partial result over the rounds it finished (cancelled
// once the job's progress shows a finished slice of it); `runs show` says so.
TEST_F(CliFleetTest, CancelledRunKeepsFinishedRoundsAsPartialResults) {
  ASSERT_NO_FATAL_FAILURE(StartAgent("w1"));
  const fs::path plan = Write("rounds.txtpb", RoundsPlan(/*max_repetitions=*/1000000));
  CliResult r = Fleet("submit " + plan.string() + " --select all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string run_id(absl::StripAsciiWhitespace(r.out));
  // The job's progress names the case of the slice just finished: once the unsupported
  // case is done (round 1) and a slice of the measured one has finished since, that
  // case has a finished round.
  fleetmark::testing::ControlClient control(coordinator_->address(), coordinator_->config().admin_token);
  ASSERT_TRUE(fleetmark::testing::WaitUntil(
      [&] {
        auto run = control.GetRun(run_id);
        return run.ok() && run->jobs_size() == 1 && run->jobs(0).cases_done() == 1 &&
               run->jobs(0).current_case_id().find("arithmetic") != std::string::npos;
      },
      absl::Seconds(120), absl::Milliseconds(20)))
      << agent_->Log();
  r = Fleet("runs cancel " + run_id);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("partial results over their finished rounds: fleetmark runs show " + run_id));
  // The agent reports the job cancelled after its results (spooled first).
  ASSERT_TRUE(fleetmark::testing::WaitUntil([&] { return agent_->Log().find(" cancelled") != std::string::npos; },
                                            absl::Seconds(60)))
      << agent_->Log();
  nlohmann::json results;
  ASSERT_TRUE(fleetmark::testing::WaitUntil(
      [&] {
        CliResult e = Fleet("export " + run_id + " --format json");
        if (e.exit_code != 0) return false;
        results = nlohmann::json::parse(e.out)["devices"][0]["results"];
        return results.size() == 2;
      },
      absl::Seconds(60)))
      << results.dump();
  for (const nlohmann::json& one : results) {
    const std::string id = one["spec"]["case_id"];
    if (id.find("suspending") != std::string::npos) {
      EXPECT_EQ(one["status"], "CASE_STATUS_UNSUPPORTED") << id;
      continue;
    }
    EXPECT_EQ(one["status"], "CASE_STATUS_CANCELLED") << id;
    ASSERT_GE(one["process_rounds"].size(), 1u) << id;
    for (size_t i = 0; i < one["process_rounds"].size(); ++i) EXPECT_EQ(one["process_rounds"][i], i + 1) << id;
    EXPECT_GT(one["samples_ns"].size(), 0u) << id;
  }
  r = Fleet("runs show " + run_id);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("2 cases: 0 ok, 1 unsupported, 0 resource exhausted, 0 failed, 1 cancelled (1 partial)"));
}

// The reference describes the markers the table really prints (docs/output.md) and the
// exit codes and regex flavour the CLI really has (docs/cli.md).
TEST_F(CliTest, ReferenceMatchesTheTableLegend) {
  // A document's text with each run of whitespace (line breaks included) as one space.
  auto doc = [](const char* name) {
    std::string text;
    for (char c : ReadFile(fs::path(FLEETMARK_SOURCE_DIR) / "docs" / name)) {
      const bool space = c == ' ' || c == '\n' || c == '\t';
      if (space && !text.empty() && text.back() == ' ') continue;
      text += space ? ' ' : c;
    }
    return text;
  };
  const std::string output = doc("output.md");
  for (const char* marker : {"(rep cap)", "(time cap)", "[throttled]", "[unstable]", "[contended N%]", "[harness N%]",
                             "[harness >= median]", "97 of 1000", "100 req."}) {
    EXPECT_THAT(output, HasSubstr(marker)) << "docs/output.md: " << marker;
  }
  const std::string cli = doc("cli.md");
  for (const char* text :
       {"| 130 / 143 | interrupted by SIGINT / SIGTERM", "RE2", "| 3 | finished, some case `failed` or `timeout`"}) {
    EXPECT_THAT(cli, HasSubstr(text)) << "docs/cli.md: " << text;
  }
  const std::string statistics = doc("statistics.md");
  EXPECT_THAT(statistics, HasSubstr("the note is `[harness >= median]` rather than a \"share\" above 100 %"));
  for (const std::string& text : {output, cli, statistics}) {
    EXPECT_THAT(text, Not(HasSubstr("`~` marks")));
    EXPECT_THAT(text, Not(HasSubstr("`!` a throttled")));
  }
}

TEST_F(CliTest, ListsEveryName) {
  CliResult r = Cli("list");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"direct",
                           "single_thread",
                           "fixed_pool",
                           "work_stealing",
                           "limited",
                           "elastic_pool",
                           "thread_per_task",
                           "async",
                           "coroutine",
                           "fiber",
                           "event_loop",
                           "openmp_for",
                           "openmp_for_dynamic",
                           "openmp_for_guided",
                           "openmp_task",
                           "std_par",
                           "arithmetic",
                           "collections",
                           "storage",
                           "network",
                           "mixed",
                           "batch",
                           "memory",
                           "fanout",
                           "load"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("  ") + name + " ")) << name;
  }
}

TEST_F(CliTest, RunsATinyPlanInEveryFormat) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);

  CliResult table = Cli("run " + plan.string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("fixed_pool_2"));
  EXPECT_THAT(table.out, HasSubstr("direct"));
  EXPECT_THAT(table.err, HasSubstr("4 cases"));
  EXPECT_THAT(table.err, Not(HasSubstr("\033[K")));  // no progress bar off a terminal

  const fs::path json_out = dir_ / "out.json";
  CliResult json = Cli("run " + plan.string() + " --format=json --quiet --out " + json_out.string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(json.out.empty());
  // As `export --out` does (trial of 2026-12-02, finding 14).
  EXPECT_THAT(json.err, HasSubstr("wrote 4 results to " + json_out.string()));
  absl::StatusOr<fleetmark::v1::RunReport> report = fleetmark::report::ParseJson(ReadFile(json_out));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->plan_name(), "tiny");
  ASSERT_EQ(report->results_size(), 4);
  for (const auto& r : report->results()) {
    EXPECT_EQ(r.status(), fleetmark::v1::CASE_STATUS_OK) << r.message();
    EXPECT_EQ(r.result_id().size(), 36u);
    EXPECT_GT(r.stats().median_ns(), 0);
    EXPECT_LE(r.samples_ns_size(), 12);
  }
  EXPECT_GT(report->host().logical_cpus(), 0u);
  // Every result carries the device fingerprint it was measured under, hash included.
  EXPECT_EQ(report->fingerprint().hash(), fleetmark::engine::FingerprintHash(report->fingerprint()));
  EXPECT_EQ(report->fingerprint().kernel(), report->host().kernel());
  for (const auto& r : report->results()) {
    EXPECT_EQ(r.fingerprint().hash().size(), 16u);
    EXPECT_EQ(r.fingerprint().hash(), fleetmark::engine::FingerprintHash(r.fingerprint()));
    EXPECT_EQ(r.fingerprint().cpu_model(), report->host().cpu_model());
    EXPECT_EQ(r.fingerprint().compiler(), fleetmark::engine::BuildCompiler());
  }
  // Plan order, whatever order the shuffled rounds finished the cases in.
  EXPECT_EQ(report->results(0).spec().case_id(), "batch/arithmetic/blocking/direct/any");
  EXPECT_EQ(report->results(3).spec().case_id(), "batch/storage/blocking/fixed_pool_2/any");

  CliResult csv = Cli("run " + plan.string() + " --format csv --filter storage");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> lines = absl::StrSplit(csv.out, "\r\n", absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);  // header + the two storage cases
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  EXPECT_EQ(header, fleetmark::report::CsvColumns());
  EXPECT_THAT(lines[1], HasSubstr("storage"));

  CliResult gbench = Cli("run " + plan.string() + " --format=gbench-json");
  ASSERT_EQ(gbench.exit_code, 0) << gbench.err;
  nlohmann::json doc = nlohmann::json::parse(gbench.out);
  ASSERT_TRUE(doc.contains("context"));
  ASSERT_TRUE(doc["benchmarks"].is_array());
  std::set<std::string> names;
  for (const auto& b : doc["benchmarks"]) names.insert(b["run_name"].get<std::string>());
  EXPECT_EQ(names.size(), 4u);
}

// A plan whose preflight gate cannot pass (MemAvailable >= 16 TiB) is deferred: exit 4,
// no case measured, the reason (gate, value vs limit) on stderr and in every result.
TEST_F(CliTest, RunExits4WhenAPreconditionDefers) {
  const fs::path plan =
      Write("deferred.txtpb", R"pb(name: "deferred"
                                   matrix {
                                     strategies { name: "direct" }
                                     workloads: [ "arithmetic" ]
                                     batch { tasks: 5 }
                                   }
                                   measurement { warmup_seconds: 0.01 max_repetitions: 5 max_seconds_per_case: 2 }
                                   preconditions { min_free_memory_mib: 16777216 cooldown_seconds: 0 max_checks: 1 }
      )pb");
  const fs::path json_out = dir_ / "deferred.json";
  CliResult r = Cli("run " + plan.string() + " --format=json --out " + json_out.string());
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("free memory")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("16777216")) << r.err;
  absl::StatusOr<fleetmark::v1::RunReport> report = fleetmark::report::ParseJson(ReadFile(json_out));
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->results_size(), 1);
  EXPECT_NE(report->results(0).status(), fleetmark::v1::CASE_STATUS_OK);
  EXPECT_EQ(report->results(0).samples_ns_size(), 0);
  EXPECT_THAT(report->results(0).message(), HasSubstr("not measured"));
}

// `taskset -c N fleetmark run` with work_stealing: it hung for good in oneTBB's
// finalize when the process could use one CPU (issue 10). This thread is pinned for the
// call, so the shell and fleetmark inherit the mask; Cli's `timeout` is the hang guard.
TEST_F(CliTest, RunsWorkStealingWhenOneCpuIsAllowed) {
  const fs::path plan = Write("ws.txtpb", R"pb(name: "ws"
                                               matrix {
                                                 strategies { name: "work_stealing" }
                                                 strategies { name: "work_stealing" threads: 1 }
                                                 strategies { name: "work_stealing" threads: 2 }
                                                 workloads: [ "arithmetic" ]
                                                 batch { tasks: 20 }
                                               }
                                               measurement { warmup_seconds: 0.01 max_repetitions: 5 rounds: 1 }
  )pb");
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  CliResult r = Cli("run " + plan.string() + " --format csv");
  ASSERT_EQ(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, "\r\n", absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.out;  // header + 3 cases
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_THAT(lines[i], HasSubstr(",ok,")) << lines[i];
}

TEST_F(CliTest, GbenchExportsCompareWithGoogleBenchmarksTool) {
  const char* compare = "/usr/share/benchmark/compare.py";
  if (!fs::exists(compare)) GTEST_FAIL() << compare << " missing (deploy/install-deps.sh test)";
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  const fs::path a = dir_ / "a.json", b = dir_ / "b.json";
  ASSERT_EQ(Cli("run " + plan.string() + " --format=gbench-json --out " + a.string()).exit_code, 0);
  ASSERT_EQ(Cli("run " + plan.string() + " --format=gbench-json --out " + b.string()).exit_code, 0);
  const fs::path out = dir_ / "compare.txt";
  const std::string command = std::string("/usr/bin/python3 ") + compare + " benchmarks " + a.string() + " " +
                              b.string() + " >" + out.string() + " 2>&1";
  const int status = std::system(command.c_str());
  const std::string text = ReadFile(out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(text, HasSubstr("batch/arithmetic/blocking/direct/any"));
  EXPECT_THAT(text, HasSubstr("batch/storage/blocking/fixed_pool_2/any"));
}

// A token description is one printable line of at most 256 bytes (it is listed by
// `tokens list`): longer or with control characters is exit 2 naming the field, and no
// token is created.
TEST_F(CliFleetTest, TokenDescriptionsAreBoundedPrintableText) {
  const CliResult before = Fleet("tokens list");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  for (const std::string& description : {std::string(257, 'd'), std::string("lab\x1b]0;pwned\x07")}) {
    CliResult r = Fleet("tokens create --description \"$(printf '" + description + "')\"");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("token.description: at most 256 bytes of printable UTF-8"));
    EXPECT_TRUE(r.out.empty()) << "no secret printed: " << r.out;
  }
  EXPECT_EQ(Fleet("tokens list").out, before.out) << "no token was created";
  EXPECT_EQ(Fleet("tokens create --description '" + std::string(256, 'd') + "'").exit_code, 0);
}

TEST_F(CliFleetTest, TokensListAndRevoke) {
  CliResult r = Fleet("tokens create --description 'lab boards'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string secret(absl::StripAsciiWhitespace(r.out));
  ASSERT_EQ(secret.size(), 64u) << r.out;
  const size_t id_at = r.err.find("tok-");
  ASSERT_NE(id_at, std::string::npos) << r.err;
  const std::string id = r.err.substr(id_at, r.err.find(' ', id_at) - id_at);

  r = Fleet("tokens list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 3u) << r.out;  // header, the seeded token, the created one
  for (const char* column : {"id", "description", "created", "revoked", "agents"}) {
    EXPECT_THAT(lines[0], HasSubstr(column));
  }
  EXPECT_THAT(r.out, HasSubstr("seed-"));
  EXPECT_THAT(r.out, HasSubstr("seeded at start"));
  std::string row;
  for (const std::string& line : lines) {
    if (line.find(id) != std::string::npos) row = line;
  }
  EXPECT_THAT(row, HasSubstr("lab boards"));
  EXPECT_THAT(row, HasSubstr(" UTC "));
  EXPECT_THAT(row, testing::ContainsRegex("UTC +- +0 *$")) << row;  // not revoked, no agent yet
  EXPECT_THAT(r.out, Not(HasSubstr(secret)));
  EXPECT_THAT(r.out, Not(HasSubstr(coordinator_->config().enrollment_token)));

  r = Fleet("tokens revoke " + id);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("revoked " + id));
  r = Fleet("tokens list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (line.find(id) != absl::string_view::npos) {
      EXPECT_THAT(std::string(line), testing::ContainsRegex("UTC +20[0-9-]+ [0-9:]+ UTC +0 *$")) << line;
    }
  }
  // A second revoke is not a silent success.
  r = Fleet("tokens revoke " + id);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("was already revoked at 20"));
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = Fleet("tokens revoke tok-nope");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("enrollment token \"tok-nope\" not found"));
  EXPECT_THAT(r.err, HasSubstr("fleetmark tokens list"));
  r = Fleet("tokens list extra");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("tokens list takes no arguments"));
}

TEST_F(CliFleetPgTest, RunCommandsAcceptUniqueIdPrefixes) {
  // Two runs (no jobs) whose ids share the prefix "abcdef0".
  const std::string one = "abcdef01-1111-4111-8111-111111111111";
  const std::string two = "abcdef02-2222-4222-8222-222222222222";
  auto inserted = fleetmark::testing::Psql(db_->uri(),
                                           "INSERT INTO plans (plan_id, name, plan, plan_text) VALUES "
                                           "('00000000-0000-4000-8000-0000000000aa', 'tiny', ''::bytea, ''); "
                                           "INSERT INTO runs (run_id, plan_id, plan_name) VALUES "
                                           "('" +
                                               one +
                                               "', '00000000-0000-4000-8000-0000000000aa', 'tiny'), "
                                               "('" +
                                               two + "', '00000000-0000-4000-8000-0000000000aa', 'tiny')");
  ASSERT_TRUE(inserted.ok()) << inserted.status();

  CliResult r = Fleet("runs show abcdef01");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run " + one + "  plan tiny"));
  r = Fleet("export ABCDEF02 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["run"]["run_id"], two);
  r = Fleet("compare abcdef01-11 --agents a,b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("has no results in run " + one));
  r = Fleet("runs cancel abcdef02");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run " + two + "  plan tiny  cancelled"));

  r = Fleet("runs show abcdef");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("run id prefix abcdef is ambiguous (matches " + one + ", " + two));
  EXPECT_THAT(r.err, HasSubstr("give more characters"));
  r = Fleet("runs cancel 123456");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no run with id prefix 123456"));
  for (const char* bad : {"abcde", "abcdefgh", "abc%ef01"}) {
    r = Fleet(std::string("export ") + bad + " --format csv");
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("run_id: a run id (UUID) or a unique prefix of it with at least 6 hex digits"));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // A full id still works, and an unknown full id is NotFound (exit 2).
  r = Fleet("runs show " + one);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Fleet("runs show 00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not found"));
}

}  // namespace

// Issue 10 item 7: text an agent sent (here a host stored before hellos were checked)
// never reaches the operator's terminal as raw control characters; and item 6's
// `agents remove` / `agents list --all`.
TEST_F(CliFleetPgTest, AgentsListEscapesAgentTextAndRemoveHidesTheAgent) {
  fleetmark::v1::HostInfo host;
  host.set_cpu_model("\x1b]0;pwned\x07\x1b[1A");
  host.set_arch(
      "x86\xc2\x9b"
      "2J");  // C1 control CSI (U+009B)
  host.set_logical_cpus(4);
  std::string hex;
  for (unsigned char c : host.SerializeAsString()) {
    static const char kDigits[] = "0123456789abcdef";
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  auto inserted =
      fleetmark::testing::Psql(db_->uri(),
                               "INSERT INTO agents (agent_id, name, credential_sha256, host, state, last_seen) VALUES "
                               "(gen_random_uuid(), 'old-box', 'x', decode('" +
                                   hex + "', 'hex'), 'offline', now())");
  ASSERT_TRUE(inserted.ok()) << inserted.status();

  CliResult r = Fleet("agents list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "raw ESC in the output";
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << "raw BEL in the output";
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << "raw C1 control in the output";
  EXPECT_THAT(r.out, HasSubstr("\\x1b]0;pwned\\x07\\x1b[1A"));
  EXPECT_THAT(r.out, HasSubstr("x86\\xc2\\x9b2J"));
  EXPECT_THAT(r.out, HasSubstr("old-box"));

  r = Fleet("agents remove old-box");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("removed agent old-box"));
  r = Fleet("agents list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("old-box")));
  r = Fleet("agents list --all");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("old-box"));
  EXPECT_THAT(r.out, HasSubstr("removed 20"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  r = Fleet("agents remove old-box");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("already removed"));
  r = Fleet("agents remove");
  EXPECT_EQ(r.exit_code, 2);
}
