// Cross-coordinator dispatch benchmark (issue 17, item 3; not a timed test): three real
// coordinators A, B, C on one PostgreSQL, simulated agents (tests/bench/sim_agent.h)
// connected to B and C, single-agent runs submitted on A one after another, alternating
// between B's and C's agents: the latency from the submit to the assignment received by
// the agent, p50/p99 over --runs runs. Measured twice, on fresh coordinators: with
// LISTEN/NOTIFY (the default) and with --listen_notifications=false (the sweep alone,
// every --sweep_interval), next to the load average.
//
//   ninja -C build/<dir> cross_coordinator_bench && build/<dir>/tests/bench/cross_coordinator_bench
// PostgreSQL: a fresh database on FLEETMARK_TEST_PG_URI, else a private deploy/pg.sh.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/sim_agent.h"
#include "tests/integration/fleet_harness.h"

ABSL_FLAG(int, agents_per_coordinator, 20, "simulated agents connected to each of B and C");
ABSL_FLAG(int, runs, 200, "single-agent runs submitted on A per measurement");
ABSL_FLAG(absl::Duration, sweep_interval, absl::Seconds(1), "coordinators' --sweep_interval");

namespace fleetmark::bench {
namespace {

using testing::ControlClient;
using testing::CoordinatorConfig;
using testing::CoordinatorProcess;

// One measurement on fresh coordinators; returns its report line.
std::string Measure(const std::string& dir, const std::string& db_uri, bool listen, const std::string& label) {
  std::vector<std::unique_ptr<CoordinatorProcess>> coordinators;
  for (const std::string name : {"A", "B", "C"}) {
    CoordinatorConfig config;
    config.database_uri = db_uri;
    config.coordinator_id = absl::StrCat(label, "-", name);
    config.heartbeat_interval = absl::Seconds(2);
    config.job_lease = absl::Seconds(30);
    config.sweep_interval = absl::GetFlag(FLAGS_sweep_interval);
    config.extra_flags = {absl::StrCat("--listen_notifications=", listen ? "true" : "false")};
    const std::string coordinator_dir = absl::StrCat(dir, "/", label, "-", name);
    std::filesystem::create_directories(coordinator_dir);
    auto started = CoordinatorProcess::Start(coordinator_dir, config);
    if (!started.ok())
      return absl::StrCat(label, ": coordinator ", name, " did not start: ", started.status().ToString());
    coordinators.push_back(*std::move(started));
  }
  ControlClient a(coordinators[0]->address(), coordinators[0]->config().admin_token);
  const int per = absl::GetFlag(FLAGS_agents_per_coordinator);
  SimFleet on_b(absl::StrCat("ipv4:", coordinators[1]->address()), coordinators[1]->config().enrollment_token);
  SimFleet on_c(absl::StrCat("ipv4:", coordinators[2]->address()), coordinators[2]->config().enrollment_token);
  on_b.StartHeartbeats(absl::Seconds(2));
  on_c.StartHeartbeats(absl::Seconds(2));
  on_b.Add(per, absl::StrCat(label, "-b"), {{"fleet", label}});
  on_c.Add(per, absl::StrCat(label, "-c"), {{"fleet", label}});
  const bool welcomed = testing::WaitUntil(
      [&] { return on_b.welcomed() + on_c.welcomed() >= static_cast<size_t>(2 * per); }, absl::Seconds(120));
  if (!welcomed || !a.WaitOnline(static_cast<size_t>(2 * per), absl::Seconds(60)).ok()) {
    return absl::StrCat(label, ": agents did not come online (", on_b.welcomed() + on_c.welcomed(), " welcomed)");
  }
  const v1::Plan plan = testing::ReducedS1Plan({"direct"}, {"arithmetic"}, 10, 2);
  const int runs = absl::GetFlag(FLAGS_runs);
  std::vector<double> ms;
  int lost = 0;
  for (int k = 0; k < runs; ++k) {
    SimFleet& fleet = k % 2 == 0 ? on_b : on_c;
    SimAgent* agent = fleet.agent(static_cast<size_t>(k / 2 % per));
    const absl::Time s0 = absl::Now();
    auto run = a.Submit(plan, absl::StrCat("name=", agent->name()));
    if (!run.ok()) return absl::StrCat(label, ": submit failed: ", run.status().ToString());
    if (testing::WaitUntil([&] { return agent->assignment_time() >= s0; }, absl::Seconds(30), absl::Milliseconds(1))) {
      ms.push_back(absl::ToDoubleMilliseconds(agent->assignment_time() - s0));
    } else {
      ++lost;
    }
    // The agent finishes at once (JobPlan{}); let its end land before it is picked again.
    (void)a.WaitRunEnded(run->run_id(), absl::Seconds(30));
  }
  const std::string line = absl::StrFormat(
      "%s: %zu of %d runs submitted on A assigned to agents of B and C (%d each), submit -> assignment "
      "p50 %.1f ms, p99 %.1f ms, max %.1f ms%s; load average %s",
      label, ms.size(), runs, per, Percentile(ms, 50), Percentile(ms, 99), Percentile(ms, 100),
      lost > 0 ? absl::StrCat(" (", lost, " not assigned within 30 s)") : "", LoadAverage());
  std::cout << line << std::endl;
  on_b.StopAll();
  on_c.StopAll();
  on_b.WaitAllDone(absl::Seconds(30));
  on_c.WaitAllDone(absl::Seconds(30));
  return line;
}

int Main() {
  signal(SIGPIPE, SIG_IGN);
  const std::string dir = testing::MakeTempDir("fleetmark-xbench");
  absl::StatusOr<testing::BenchDatabase> bench_database = testing::OpenBenchDatabase();
  if (!bench_database.ok()) {
    std::cerr << bench_database.status() << "\n";
    return 1;
  }
  const std::string db_uri = bench_database->uri;
  std::cout << "machine: " << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs; PostgreSQL " << db_uri << "; sweep interval "
            << absl::FormatDuration(absl::GetFlag(FLAGS_sweep_interval)) << std::endl;
  const std::string notify = Measure(dir, db_uri, true, "notify");
  const std::string sweep = Measure(dir, db_uri, false, "sweep-only");
  std::cout << "\n== cross-coordinator dispatch summary\n" << notify << "\n" << sweep << std::endl;
  testing::RemoveTree(dir);
  return 0;
}

}  // namespace
}  // namespace fleetmark::bench

int main(int argc, char** argv) {
  // As fleet_bench: no deadlock-cycle detection on every absl::Mutex of this process.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  return fleetmark::bench::Main();
}
