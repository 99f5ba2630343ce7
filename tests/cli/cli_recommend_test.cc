// `fleetmark recommend` end to end: on a real local run of a small sweep plan
// (--results FILE, real child processes) and through a real coordinator and agent
// (--run, --plan_latest, --select), table and JSON; "not measured near this profile"
// outside the sweep; bad profiles and flags exit 2 naming the key or flag. And
// `recommend --measure`: the plan it builds for a tiny profile, measured by the real
// runner here and by a real agent through a real coordinator (on the in-memory store), answered in
// one sentence naming a strategy of the registry, with its JSON fields.
//
// The plan's known answer: at wait_us=1000, 20 tasks on `direct` wait one after the
// other (~20 ms) while a 20-thread pool waits for them together (~1 ms), so the pool
// is the fastest by far more than any noise.
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "cli_fleet_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "engine/strategies/registry.h"
#include "tests/cli/sweep_plan.h"

namespace fleetmark_cli_test {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

// The one answer of the one device of `doc` (recommend's JSON).
const nlohmann::json& OnlyAnswer(const nlohmann::json& doc) {
  EXPECT_EQ(doc.at("devices").size(), 1u) << doc.dump();
  EXPECT_EQ(doc.at("devices").at(0).at("answers").size(), 1u) << doc.dump();
  return doc.at("devices").at(0).at("answers").at(0);
}

// At wait_us=1000, on that measured point: the pool is the fastest by far, in every one
// of the three processes; the answer is it, decided (or undecided only when the device
// was contended while it measured).
void ExpectPoolFastestAt1000(const nlohmann::json& doc) {
  const nlohmann::json& a = OnlyAnswer(doc);
  EXPECT_EQ(a.at("group"), "batch/synthetic[cpu_ns=2000]/blocking/any");
  ASSERT_EQ(a.at("points").size(), 1u);
  const nlohmann::json& p = a.at("points").at(0);
  EXPECT_EQ(p.at("point").at("wait_us"), 1000);
  EXPECT_EQ(p.at("ranked").at(0).at("strategy"), "fixed_pool_io") << doc.dump(2);
  EXPECT_EQ(p.at("ranked").at(1).at("strategy"), "direct");
  EXPECT_GE(p.at("pairs"), 3) << doc.dump(2);
  if (p.at("kind") != "decided") {
    EXPECT_EQ(p.at("kind"), "undecided") << doc.dump(2);
    EXPECT_THAT(p.at("reason").get<std::string>(), HasSubstr("contended")) << doc.dump(2);
    EXPECT_EQ(a.at("verdict"), "undecided") << doc.dump(2);
    EXPECT_EQ(a.at("best"), "");
  } else {
    EXPECT_EQ(a.at("verdict"), "winner") << doc.dump(2);
    EXPECT_EQ(a.at("best"), "fixed_pool_io");
    EXPECT_EQ(a.at("runner_up"), "direct");
    EXPECT_GT(a.at("ratio_low").get<double>(), 1.0 + p.at("margin").get<double>()) << doc.dump(2);
  }
}

// The table row of that answer.
constexpr char kPoolRow[] =
    R"(batch/synthetic\[cpu_ns=2000\]/blocking/any  (fixed_pool_io  [0-9.]+x \[[0-9.]+x, [0-9.]+x\] over direct|undecided: fixed_pool_io, direct +-) +wait_us=1000 \(measured\): )";

TEST_F(CliTest, RecommendFromALocalSweepRun) {
  const fs::path plan = Write("sweep.txtpb", kSweepPlan3);
  const fs::path json = dir_ / "r.json";
  CliResult run = Cli("run " + plan.string() + " --format json --out " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string results = " --results " + json.string();

  CliResult on = Cli("recommend --profile 'cpu_us=2,wait_ms=1' --format json" + results);
  ASSERT_EQ(on.exit_code, 0) << on.err;
  const nlohmann::json doc = nlohmann::json::parse(on.out);
  EXPECT_EQ(doc.at("profile").at("cpu_ns"), 2000);
  EXPECT_EQ(doc.at("profile").at("wait_us"), 1000);
  ExpectPoolFastestAt1000(doc);

  CliResult table = Cli("recommend --profile wait_us=1000" + results);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("profile wait_us=1000\n"));
  EXPECT_THAT(table.out, ContainsRegex(kPoolRow)) << table.out;
  EXPECT_THAT(table.out, HasSubstr("never an interpolation"));

  // Between the two points: their two verdicts decide (the same winner, a crossover,
  // equivalent or undecided).
  CliResult between = Cli("recommend --profile wait_us=500 --format json" + results);
  ASSERT_EQ(between.exit_code, 0) << between.err;
  const nlohmann::json between_doc = nlohmann::json::parse(between.out);
  const nlohmann::json& b = OnlyAnswer(between_doc);
  ASSERT_EQ(b.at("points").size(), 2u) << between.out;
  const nlohmann::json &p0 = b.at("points").at(0), &p1 = b.at("points").at(1);
  EXPECT_EQ(p0.at("point").at("wait_us"), 0);
  EXPECT_EQ(p1.at("point").at("wait_us"), 1000);
  const bool decided = p0.at("kind") == "decided" && p1.at("kind") == "decided";
  const bool open = (p0.at("kind") != "decided" && p0.at("kind") != "equivalent") ||
                    (p1.at("kind") != "decided" && p1.at("kind") != "equivalent");
  const std::string expected = decided ? (p0.at("winner") == p1.at("winner") ? "winner" : "crossover")
                               : open  ? "undecided"
                                       : "equivalent";
  EXPECT_EQ(b.at("verdict"), expected) << between.out;

  // Outside the sweep, or at another computation than measured: not measured.
  CliResult outside = Cli("recommend --profile wait_us=5000" + results);
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  EXPECT_THAT(outside.out, HasSubstr("not measured near this profile"));
  EXPECT_THAT(outside.out, HasSubstr("wait_us=5000 is outside the measured 0..1000"));
  EXPECT_THAT(outside.out, ::testing::Not(HasSubstr("fixed_pool_io")));
  CliResult other_cpu = Cli("recommend --profile cpu_us=50,wait_us=1000 --format json" + results);
  ASSERT_EQ(other_cpu.exit_code, 0) << other_cpu.err;
  const nlohmann::json other_doc = nlohmann::json::parse(other_cpu.out);
  const nlohmann::json& o = OnlyAnswer(other_doc);
  EXPECT_EQ(o.at("verdict"), "not_measured");
  EXPECT_EQ(o.at("reason"), "cpu_ns=50000: this sweep measured cpu_ns=2000 only");
  EXPECT_EQ(o.at("best"), "");
}

// A profile whose every batch is short: 4 tasks of ~1 us of computation and 200 us of
// waiting (the neighbours 100 and 400 us), so the run takes seconds, through the real
// runner (child processes, quick settings).
constexpr char kTinyMeasure[] = "recommend --profile 'cpu_us=1,wait_us=200' --tasks 4 --measure";

// The checks of a --measure answer's JSON for one device named `device`.
void ExpectMeasuredAnswer(const nlohmann::json& doc, const std::string& device) {
  EXPECT_EQ(doc.at("profile").at("cpu_ns"), 1000);
  EXPECT_EQ(doc.at("profile").at("wait_us"), 200);
  EXPECT_EQ(doc.at("assumed").at("tasks"), 4);
  EXPECT_EQ(doc.at("assumed").at("io_threads"), nlohmann::json::array({4}));
  EXPECT_THAT(doc.at("assumed").at("text").get<std::string>(), HasSubstr("4 tasks per batch; thread counts tried 4"));
  ASSERT_EQ(doc.at("devices").size(), 1u) << doc.dump(2);
  const nlohmann::json& d = doc.at("devices").at(0);
  EXPECT_EQ(d.at("device"), device);
  // One sentence that names a strategy of the registry: a recommendation, or (nothing
  // decided, e.g. on a loaded machine) the candidates not told apart.
  const std::string sentence = d.at("sentence");
  EXPECT_TRUE(absl::StartsWith(sentence, "use ") || absl::StartsWith(sentence, "no clear answer yet: ")) << sentence;
  bool names_one = false;
  for (const fleetmark::engine::StrategyTraits& s : fleetmark::engine::kStrategies) {
    names_one = names_one || absl::StrContains(sentence, std::string(s.name));
  }
  EXPECT_TRUE(names_one) << sentence;
  // Both io modes, each at the profile and its four neighbours.
  ASSERT_EQ(d.at("io_modes").size(), 2u) << doc.dump(2);
  std::set<std::string> modes;
  for (const nlohmann::json& m : d.at("io_modes")) {
    modes.insert(m.at("io_mode").get<std::string>());
    EXPECT_THAT(m.at("verdict").get<std::string>(), ::testing::AnyOf("winner", "open")) << m.dump(2);
    EXPECT_NE(fleetmark::engine::FindStrategy(m.at("strategy").at("name").get<std::string>()), nullptr) << m.dump(2);
    ASSERT_EQ(m.at("points").size(), 5u);
    EXPECT_EQ(m.at("points").at(0).at("role"), "profile");
    EXPECT_EQ(m.at("points").at(0).at("params").at("wait_us"), 200);
    EXPECT_EQ(m.at("points").at(4).at("params").at("wait_us"), 400);
    for (const nlohmann::json& p : m.at("points")) {
      EXPECT_TRUE(p.at("measured")) << p.dump(2);
      EXPECT_FALSE(p.at("verdict_text").get<std::string>().empty());
    }
  }
  EXPECT_EQ(modes, (std::set<std::string>{"blocking", "suspending"}));
}

TEST_F(CliTest, RecommendMeasuresTheProfileHere) {
  CliResult json = Cli(std::string(kTinyMeasure) + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.err, HasSubstr("recommend: measuring 25 cases here with quick settings"));
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  ExpectMeasuredAnswer(doc, doc.at("devices").at(0).at("device"));

  // --dry_run: the plan, valid, naming its cases; --plan_out writes the same.
  CliResult dry = Cli(std::string(kTinyMeasure) + " --dry_run");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("name: \"recommend\""));
  EXPECT_THAT(dry.out, HasSubstr("io_modes: \"suspending\""));
  const fs::path plan = dir_ / "bracket.txtpb";
  ASSERT_EQ(Cli(std::string(kTinyMeasure) + " --dry_run --plan_out " + plan.string()).exit_code, 0);
  CliResult valid = Cli("plan validate " + plan.string());
  EXPECT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_THAT(valid.out, HasSubstr("valid plan \"recommend\": 25 cases"));
}

// `recommend --workload network`, the quickstart's last answer, on a real local run of
// a small S1-like plan: one sentence across the io modes, on the one JSON line the
// quickstart's sed reads ("sentence": "use ...").
TEST_F(CliTest, RecommendWorkloadAnswersInOneSentence) {
  const fs::path plan = Write(
      "s1-like.txtpb",
      R"pb(name: "s1-like"
           matrix {
             strategies { name: "direct" }
             strategies { name: "fixed_pool" threads: 10 label: "fixed_pool_io" }
             strategies { name: "coroutine" }
             workloads: [ "network" ]
             io_modes: [ "blocking", "suspending" ]
             batch { tasks: 10 }
           }
           measurement { warmup_seconds: 0.01 min_repetitions: 6 max_seconds_per_case: 0.3 rounds: 1 processes: 3 }
      )pb");
  const fs::path json = dir_ / "s1.json";
  CliResult run = Cli("run " + plan.string() + " --format json --out " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CliResult answer = Cli("recommend --workload network --format json --results " + json.string());
  ASSERT_EQ(answer.exit_code, 0) << answer.err;
  EXPECT_THAT(answer.out, ContainsRegex("\n *\"sentence\": \"use [^\"]+\",?\n")) << answer.out;
  const nlohmann::json doc = nlohmann::json::parse(answer.out);
  EXPECT_EQ(doc.at("workload"), "network");
  const nlohmann::json& d = doc.at("devices").at(0);
  ASSERT_EQ(d.at("io_modes").size(), 2u) << answer.out;
  for (const nlohmann::json& m : d.at("io_modes")) {
    // direct waits one task after another (~45 ms); the others wait together.
    EXPECT_NE(m.at("best"), "direct") << answer.out;
  }
  CliResult table = Cli("recommend --workload network --results " + json.string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr(": " + d.at("sentence").get<std::string>() + "\n"));
  CliResult none = Cli("recommend --workload storage --results " + json.string());
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("no answer: no storage batch case was measured ok"));
  CliResult both = Cli("recommend --workload network --profile wait_us=1 --results " + json.string());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("give --profile or --workload, not both"));
  CliResult neither = Cli("recommend --results " + json.string());
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_THAT(neither.err, HasSubstr("recommend needs --profile, or --workload NAME"));
  // An empty --profile is given: its parser says what is wrong with it (it said "needs --profile").
  CliResult empty = Cli("recommend --profile '' --results " + json.string());
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.err, HasSubstr("--profile: empty; give key=value"));
}

TEST_F(CliTest, RecommendMeasureRefusesBadInput) {
  CliResult range = Cli("recommend --profile 'cpu_ms=20' --measure --dry_run");
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_THAT(range.err,
              HasSubstr("--profile: cpu_ms: 0 <= cpu_ms <= 10 for --measure (cpu_ns <= 10000000), got \"20\""));
  // Past the plan's range too, the range quoted is --measure's (it quoted the plan's
  // 0 <= cpu_us <= 1000000, which --measure refuses as well); without --measure, the plan's.
  for (const char* value : {"99999999", "99999999999999999999999"}) {
    CliResult r = Cli(std::string("recommend --profile cpu_us=") + value + " --measure --dry_run");
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_EQ(r.err, std::string("fleetmark: recommend: --profile: cpu_us: 0 <= cpu_us <= 10000 for --measure (cpu_ns "
                                 "<= 10000000), got \"") +
                         value + "\"\n");
  }
  CliResult wait = Cli("recommend --profile wait_ms=1000 --measure --dry_run");
  EXPECT_EQ(wait.exit_code, 2);
  EXPECT_THAT(wait.err, HasSubstr("--profile: wait_ms: 0 <= wait_ms <= 100 for --measure (wait_us <= 100000), got"));
  CliResult plan_range = Cli("recommend --profile cpu_us=99999999 --results x.json");
  EXPECT_EQ(plan_range.exit_code, 2);
  EXPECT_THAT(plan_range.err, HasSubstr("--profile: cpu_us: 0 <= cpu_us <= 1000000 (cpu_ns <= 1000000000), got"));
  EXPECT_THAT(plan_range.err, Not(HasSubstr("for --measure")));
  // Hex and values that round to 0 were read (0x10 as 16, 1e-7 as 0).
  CliResult hex = Cli("recommend --profile 'cpu_us=0x10' --measure --dry_run");
  EXPECT_EQ(hex.exit_code, 2);
  EXPECT_THAT(hex.err, HasSubstr("--profile: cpu_us: a plain decimal number (e.g. 50 or 0.5) in 0 <= cpu_us"));
  CliResult tiny = Cli("recommend --profile 'cpu_us=0.0000001' --measure --dry_run");
  EXPECT_EQ(tiny.exit_code, 2);
  EXPECT_THAT(tiny.err, HasSubstr("--profile: cpu_us: 0.0000001 is 0.0001 cpu_ns, which rounds to 0"));
  EXPECT_EQ(tiny.out, "");
  CliResult tasks = Cli("recommend --profile wait_us=10 --measure --tasks 0 --dry_run");
  EXPECT_EQ(tasks.exit_code, 2);
  EXPECT_THAT(tasks.err, HasSubstr("--tasks: 1 <= tasks <= 10000, got 0"));
  // One rule for the flag: past its type it said `--tasks: 1..10000, got "99999999999"`.
  for (const char* value : {"10001", "99999999999", "-1"}) {
    CliResult r = Cli(std::string("recommend --profile wait_us=10 --measure --dry_run --tasks ") + value);
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_THAT(r.err, HasSubstr(std::string("fleetmark: --tasks: 1 <= tasks <= 10000, got ") + value + " (see"))
        << r.err;
  }
  // The same rule for runs list --limit (it said "1..1000, got \"99999999999\"" past the type).
  for (const char* value : {"0", "99999999999"}) {
    CliResult r = Cli(std::string("runs list --coordinator 127.0.0.1:1 --limit ") + value);
    EXPECT_EQ(r.exit_code, 2) << value;
    EXPECT_THAT(r.err, HasSubstr(std::string("fleetmark: --limit: 1 <= limit <= 1000, got ") + value)) << r.err;
  }
  CliResult without = Cli("recommend --profile wait_us=10 --tasks 5 --results x.json");
  EXPECT_EQ(without.exit_code, 2);
  EXPECT_THAT(without.err, HasSubstr("--tasks applies to --measure"));
  CliResult timeout = Cli("recommend --profile wait_us=10 --measure --timeout 5m");
  EXPECT_EQ(timeout.exit_code, 2);
  EXPECT_THAT(timeout.err, HasSubstr("--timeout applies to --measure --select (the fleet)"));
  CliResult source = Cli("recommend --profile wait_us=10 --measure --results x.json");
  EXPECT_EQ(source.exit_code, 2);
  EXPECT_THAT(source.err, HasSubstr("--measure measures a plan of its own: it takes no --results"));
}

TEST_F(CliTest, RecommendRefusesBadInput) {
  const fs::path json = Write("empty.json", "{\"results\": []}");
  const std::string results = " --results " + json.string();
  CliResult key = Cli("recommend --profile 'cpus=5'" + results);
  EXPECT_EQ(key.exit_code, 2);
  EXPECT_THAT(key.err, HasSubstr("--profile: unknown key \"cpus\"; allowed keys: cpu_ns, cpu_us, cpu_ms, wait_us"));
  CliResult range = Cli("recommend --profile 'wait_ms=20000'" + results);
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_THAT(range.err, HasSubstr("--profile: wait_ms: 0 <= wait_ms <= 10000 (wait_us <= 10000000), got \"20000\""));
  EXPECT_EQ(Cli("recommend" + results).exit_code, 2);                                         // no --profile
  EXPECT_EQ(Cli("recommend --profile wait_us=1").exit_code, 2);                               // no source
  EXPECT_EQ(Cli("recommend --profile wait_us=1 --run abcdef123456" + results).exit_code, 2);  // two
  CliResult format = Cli("recommend --profile wait_us=1 --format csv" + results);
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_THAT(format.err, HasSubstr("--format: table or json, got \"csv\""));
  CliResult select = Cli("recommend --profile wait_us=1 --select 'coers>=8'" + results);
  EXPECT_EQ(select.exit_code, 2);
  EXPECT_THAT(select.err, HasSubstr("--select: "));
  // A file without a result is an error naming it (it answered for no device with exit 0
  // from map; a file with results but no sweep is answered, RecommendFromAResultsFile...).
  CliResult none = Cli("recommend --profile wait_us=1" + results);
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_EQ(none.out, "");
  EXPECT_THAT(none.err, HasSubstr("empty.json: the file holds no results"));
}

TEST_F(CliFleetTest, RecommendFromARunOfTheFleet) {
  ASSERT_NO_FATAL_FAILURE(StartAgent("w1", "rack=a"));
  fleetmark::testing::ControlClient control(coordinator_->address(), coordinator_->config().admin_token);
  absl::StatusOr<fleetmark::v1::Plan> plan = fleetmark::testing::PlanFromText(kSweepPlan3);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<fleetmark::v1::RunInfo> run = control.Submit(*plan, "all");
  ASSERT_TRUE(run.ok()) << run.status();
  absl::StatusOr<fleetmark::v1::RunInfo> ended = control.WaitRunEnded(run->run_id(), absl::Seconds(240));
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_EQ(ended->status(), "done") << agent_->Log();

  // agents list shows the labels (issue 34, small gaps: the Fleet page had them, the CLI not).
  CliResult agents = Fleet("agents list");
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_THAT(LineWith(agents.out, "labels"), ::testing::EndsWith("labels")) << agents.out;
  EXPECT_THAT(LineWith(agents.out, "w1 "), ::testing::EndsWith(" rack=a")) << agents.out;

  CliResult by_run = Fleet("recommend --profile wait_us=1000 --format json --run " + run->run_id());
  ASSERT_EQ(by_run.exit_code, 0) << by_run.err;
  const nlohmann::json doc = nlohmann::json::parse(by_run.out);
  EXPECT_EQ(doc.at("devices").at(0).at("device"), "w1");
  ExpectPoolFastestAt1000(doc);

  CliResult latest = Fleet("recommend --profile wait_us=1000 --plan_latest sweep --select label:rack=a");
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_THAT(latest.out, HasSubstr("run " + run->run_id()));  // the run's summary heads the table
  EXPECT_THAT(latest.out, ContainsRegex(std::string("\nw1      ") + kPoolRow)) << latest.out;

  CliResult none = Fleet("recommend --profile wait_us=1000 --run " + run->run_id() + " --select name=other");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("--select matched none of its 1 agent"));
  CliResult no_plan = Fleet("recommend --profile wait_us=1000 --plan_latest nosuchplan");
  EXPECT_EQ(no_plan.exit_code, 2);
  EXPECT_THAT(no_plan.err, HasSubstr("--plan_latest: no finished (done) run of plan \"nosuchplan\" (0 runs of it"));
}

TEST_F(CliFleetTest, RecommendMeasuresTheProfileOnTheFleet) {
  ASSERT_NO_FATAL_FAILURE(StartAgent("w1", "rack=a"));
  CliResult answered = Fleet(std::string(kTinyMeasure) + " --select label:rack=a --timeout 4m --format json");
  ASSERT_EQ(answered.exit_code, 0) << answered.err << agent_->Log();
  EXPECT_THAT(answered.err, HasSubstr("submitted run "));
  ExpectMeasuredAnswer(nlohmann::json::parse(answered.out), "w1");
  // The run is the fleet's like any other: recommend --plan_latest answers from it too.
  CliResult latest = Fleet("recommend --profile 'cpu_us=1,wait_us=200' --plan_latest recommend --format json");
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_EQ(nlohmann::json::parse(latest.out).at("devices").at(0).at("device"), "w1");
  CliResult nobody = Fleet(std::string(kTinyMeasure) + " --select name=nobody");
  EXPECT_NE(nobody.exit_code, 0);
}

}  // namespace
}  // namespace fleetmark_cli_test
