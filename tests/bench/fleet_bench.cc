// Fleet benchmark (issue 3; not a timed test): a real coordinator on a real PostgreSQL,
// driven by simulated agents in this process (tests/bench/sim_agent.h), measuring
//   1. the real fleetmark-agent's idle footprint (RSS, CPU) next to its heartbeats;
//   2. dispatch latency, submit -> assignment received, with N agents connected:
//      one run fanned out to all of them, and single-agent runs one after another;
//   3. result ingestion rate (results/s, acked = committed) next to loading the same
//      number of rows with COPY through psql into case_results (and, for reference,
//      into a copy of it without foreign keys);
//   4. agents held connected with heartbeats (target 2 000).
//
//   ninja -C build/<dir> fleet_bench && build/<dir>/tests/bench/fleet_bench
// PostgreSQL: a fresh database on FLEETMARK_TEST_PG_URI, else a private deploy/pg.sh.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/synchronization/mutex.h"
#include "agent/uuid.h"
#include "tests/bench/bench_stats.h"
#include "tests/bench/proc_stats.h"
#include "tests/bench/sim_agent.h"
#include "tests/integration/fleet_harness.h"
#include "tests/integration/subprocess.h"

ABSL_FLAG(int, agents, 2000, "simulated agents to hold connected with heartbeats");
ABSL_FLAG(int, dispatch_agents, 1000, "agents connected during the dispatch measurements");
ABSL_FLAG(int, fanout_rounds, 5, "fan-outs (one run to every dispatch agent) measured");
ABSL_FLAG(absl::Duration, fanout_gap, absl::Seconds(5), "pause after each fan-out round's run ended");
ABSL_FLAG(int, single_dispatches, 200, "single-agent runs submitted one after another");
ABSL_FLAG(int, ingest_agents, 100, "agents sending results in the ingestion phase");
ABSL_FLAG(int, ingest_rounds, 3, "ingestion rounds (and COPY rounds) measured");
ABSL_FLAG(int, results_per_agent, 200, "results each ingesting agent sends");
ABSL_FLAG(int, samples_per_result, 100, "raw samples per result (row size)");
ABSL_FLAG(absl::Duration, hold, absl::Seconds(30), "how long the agents are held connected");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(5), "coordinator heartbeat interval");
ABSL_FLAG(absl::Duration, idle_window, absl::Seconds(60), "real agent idle measurement window");
ABSL_FLAG(int, executor_threads, 4, "coordinator --executor_threads");
ABSL_FLAG(int, db_pool_size, 8, "coordinator --db_pool_size");
ABSL_FLAG(int, hold_processes, 0,
          "simulator processes holding the agents beyond --dispatch_agents (0 = all in this process); "
          "their CPU share is reported");
ABSL_FLAG(int, connect_in_flight, 500,
          "hellos each --hold_processes simulator keeps waiting for their Welcome at once (a ramp, not a storm)");
ABSL_FLAG(int, max_agent_streams, 0, "coordinator --max_agent_streams (0 = its descriptor budget)");
ABSL_FLAG(int, hold_coordinators, 1,
          "coordinators on the one database holding the --hold_processes agents (round-robin by process); "
          "the first also runs the dispatch and ingestion phases");
ABSL_FLAG(bool, hold_only, false, "skip the idle, dispatch and ingestion phases (a hold run)");
// A simulator child (started by --hold_processes; not for use by hand): holds
// --sim_child_agents agents on --sim_child_target and writes its counts to
// --sim_child_status every second until killed.
ABSL_FLAG(std::string, sim_child_target, "", "internal: simulator child's coordinator target");
ABSL_FLAG(std::string, sim_child_token, "", "internal: simulator child's enrollment token");
ABSL_FLAG(std::string, sim_child_prefix, "", "internal: simulator child's agent name prefix");
ABSL_FLAG(int, sim_child_agents, 0, "internal: simulator child's agents");
ABSL_FLAG(std::string, sim_child_status, "", "internal: simulator child's status file");

namespace fleetmark::bench {
namespace {

using testing::ControlClient;
using testing::CoordinatorConfig;
using testing::CoordinatorProcess;

std::string Mib(uint64_t bytes) { return absl::StrFormat("%.1f MiB", bytes / 1048576.0); }

// CPU time (user + system), seconds, of this process (RUSAGE_SELF) or of its children
// that ended and were waited for (RUSAGE_CHILDREN: psql).
double RusageCpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return absl::ToDoubleSeconds(absl::DurationFromTimeval(usage.ru_utime) + absl::DurationFromTimeval(usage.ru_stime));
}
double SelfCpuSeconds() { return RusageCpuSeconds(RUSAGE_SELF); }

// CPU seconds by side of a phase: the coordinator, PostgreSQL (every postgres process),
// this process (the simulated agents) and its ended children (psql).
struct CpuSplit {
  double coordinator = 0, postgres = 0, simulator = 0, psql = 0;

  static CpuSplit Now(pid_t coordinator_pid) {
    return {CpuSeconds(coordinator_pid), PostgresCpuSeconds(), SelfCpuSeconds(), RusageCpuSeconds(RUSAGE_CHILDREN)};
  }
  CpuSplit operator-(const CpuSplit& o) const {
    return {coordinator - o.coordinator, postgres - o.postgres, simulator - o.simulator, psql - o.psql};
  }
  // "coordinator 0.41 s, PostgreSQL 0.62 s, ..." per 1 000 `rows`.
  std::string PerThousand(uint64_t rows) const {
    const double k = rows > 0 ? 1000.0 / static_cast<double>(rows) : 0;
    return absl::StrFormat("coordinator %.3f s, PostgreSQL %.3f s, simulator %.3f s, psql %.3f s", coordinator * k,
                           postgres * k, simulator * k, psql * k);
  }
};

bool Wait(const std::function<bool()>& done, absl::Duration timeout) {
  return testing::WaitUntil(done, timeout, absl::Milliseconds(20));
}

struct Report {
  std::vector<std::string> lines;
  void Add(const std::string& line) {
    std::cout << line << std::endl;
    lines.push_back(line);
  }
};

void MeasureRealAgent(const std::string& dir, CoordinatorProcess& coordinator, ControlClient& control, Report& report) {
  testing::AgentConfig config;
  config.name = "real-agent";
  config.token = coordinator.config().enrollment_token;
  auto agent = testing::AgentProcess::Start(dir, coordinator.address(), config);
  if (!agent.ok() || !control.WaitOnline(1, absl::Seconds(60)).ok()) {
    report.Add(absl::StrCat("real agent: did not come online: ", agent.status().ToString()));
    return;
  }
  const pid_t pid = (*agent)->process()->pid();
  absl::SleepFor(absl::Seconds(5));  // past start-up (host detection, first heartbeat)
  const double cpu0 = CpuSeconds(pid);
  const absl::Time t0 = absl::Now();
  absl::SleepFor(absl::GetFlag(FLAGS_idle_window));
  const double cpu1 = CpuSeconds(pid);
  const double wall = absl::ToDoubleSeconds(absl::Now() - t0);
  const uint64_t rss = RssBytes(pid);
  std::string threads;
  {
    std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Threads:", 0) == 0) threads = line.substr(8);
    }
  }
  report.Add(absl::StrFormat("real agent idle: RSS %s, CPU %.3f s over %.0f s (%.3f%% of one core), threads %s",
                             Mib(rss), cpu1 - cpu0, wall, 100.0 * (cpu1 - cpu0) / wall,
                             std::string(absl::StripAsciiWhitespace(threads))));
  auto agents = control.ListAgents("name=real-agent");
  if (agents.ok() && !agents->empty()) {
    report.Add(absl::StrFormat("real agent heartbeat says: rss_bytes %s, cpu_seconds %.3f",
                               Mib((*agents)[0].rss_bytes()), (*agents)[0].cpu_seconds()));
  }
  (*agent)->process()->Signal(SIGTERM);
  (void)(*agent)->process()->Wait(absl::Seconds(10));
}

// One run to every dispatch agent: submit -> assignment received, per agent (ms).
// Empty on a failed submit (reported).
std::vector<double> FanOutRound(SimFleet& fleet, ControlClient& control, const v1::Plan& plan, int fanout_agents,
                                int round, Report& report) {
  const uint64_t before = fleet.assignments.load();
  const absl::Time t0 = absl::Now();
  auto run = control.Submit(plan, "label:d=1");
  const absl::Time submitted = absl::Now();
  if (!run.ok()) {
    report.Add(absl::StrCat("dispatch fan-out: submit failed: ", run.status().ToString()));
    return {};
  }
  const bool all = Wait([&] { return fleet.assignments.load() - before >= static_cast<uint64_t>(fanout_agents); },
                        absl::Seconds(300));
  std::vector<double> fanout_ms;
  for (size_t i = 0; i < fleet.size(); ++i) {
    const absl::Time at = fleet.agent(i)->assignment_time();
    if (at >= t0) fanout_ms.push_back(absl::ToDoubleMilliseconds(at - t0));
  }
  if (fleet.refusals.load() > 0) {
    report.Add(absl::StrCat("refusals: ", fleet.refusals.load(), ", first: ", fleet.first_refusal()));
  }
  report.Add(absl::StrFormat(
      "dispatch fan-out round %d (1 run -> %d agents, %zu connected): %zu assignments%s, submit RPC %.1f ms, "
      "latency p50 %.1f ms, p99 %.1f ms, max %.1f ms; submitted at %s UTC (to align a server-side trace)",
      round, fanout_agents, fleet.open_streams(), fanout_ms.size(), all ? "" : " (INCOMPLETE)",
      absl::ToDoubleMilliseconds(submitted - t0), Percentile(fanout_ms, 50), Percentile(fanout_ms, 99),
      Percentile(fanout_ms, 100), absl::FormatTime("%Y-%m-%d %H:%M:%E6S", t0, absl::UTCTimeZone())));
  fleet.FinishHeldJobs();
  (void)control.WaitRunEnded(run->run_id(), absl::Seconds(300));
  return fanout_ms;
}

void MeasureDispatch(SimFleet& fleet, ControlClient& control, int fanout_agents, Report& report) {
  fleet.set_job_plan({.results_per_job = 0, .hold_finish = true});
  const v1::Plan plan = testing::ReducedS1Plan({"direct"}, {"arithmetic"}, 10, 2);
  // Several fan-outs: one round on a shared 2-core machine is one draw of its noise.
  // Summary: the median over rounds of each round's p50 and p99.
  std::vector<double> p50s, p99s;
  for (int round = 1; round <= absl::GetFlag(FLAGS_fanout_rounds); ++round) {
    const std::vector<double> ms = FanOutRound(fleet, control, plan, fanout_agents, round, report);
    if (ms.empty()) break;
    p50s.push_back(Percentile(ms, 50));
    p99s.push_back(Percentile(ms, 99));
    // Let this round's 1 000 job ends (group-committed FinishJobs batches, acks,
    // dispatcher wakes) finish: a fan-out goes to an idle fleet. With 1 s here every
    // other round overlapped that tail and took ~100 ms longer.
    absl::SleepFor(absl::GetFlag(FLAGS_fanout_gap));
  }
  if (!p99s.empty()) {
    report.Add(absl::StrFormat(
        "dispatch fan-out over %zu rounds: median p50 %.1f ms, median p99 %.1f ms (p99 min %.1f, max %.1f)",
        p99s.size(), Percentile(p50s, 50), Percentile(p99s, 50), Percentile(p99s, 0), Percentile(p99s, 100)));
  }
  fleet.set_job_plan({.results_per_job = 0});

  // Single-agent runs, one after another (the agents are idle again).
  std::vector<double> single_ms;
  const int singles = std::min<int>(absl::GetFlag(FLAGS_single_dispatches), fanout_agents);
  for (int k = 0; k < singles; ++k) {
    SimAgent* agent = fleet.agent(static_cast<size_t>(k));
    const absl::Time s0 = absl::Now();
    auto single = control.Submit(plan, absl::StrCat("name=", agent->name()));
    if (!single.ok()) {
      report.Add(absl::StrCat("single dispatch: submit failed: ", single.status().ToString()));
      return;
    }
    if (Wait([&] { return agent->assignment_time() >= s0; }, absl::Seconds(30))) {
      single_ms.push_back(absl::ToDoubleMilliseconds(agent->assignment_time() - s0));
    }
  }
  report.Add(
      absl::StrFormat("dispatch single-agent runs (%zu connected): %zu of %d assigned, latency p50 %.1f ms, "
                      "p99 %.1f ms, max %.1f ms",
                      fleet.open_streams(), single_ms.size(), singles, Percentile(single_ms, 50),
                      Percentile(single_ms, 99), Percentile(single_ms, 100)));
}

// Writes `rows` CSV rows shaped like case_results rows (`run_created_at`: the run's
// created_at, the partition key); returns the column list.
std::string WriteCopyCsv(const std::string& path, int rows, int samples, const std::string& run_id,
                         const std::string& job_id, const std::string& agent_id, const std::string& run_created_at) {
  std::ofstream out(path, std::ios::trunc);
  for (int i = 0; i < rows; ++i) {
    const std::string id = agent::NewUuidV4().value_or("");
    const v1::CaseResult r = SyntheticResult(id, run_id, job_id, i, samples);
    std::string bytes;
    r.SerializeToString(&bytes);
    std::vector<std::string> sample_text;
    for (int64_t s : r.samples_ns()) sample_text.push_back(absl::StrCat(s));
    out << id << ',' << run_id << ',' << job_id << ',' << agent_id << ',' << r.spec().case_id()
        << ",batch,arithmetic,blocking," << r.spec().strategy().name() << ',' << r.spec().strategy().name() << ','
        << r.spec().strategy().threads() << ",any,ok,ci_target," << r.stats().count() << ',' << r.stats().min_ns()
        << ',' << r.stats().median_ns() << ',' << r.stats().max_ns() << ',' << r.stats().mean_ns() << ','
        << r.stats().stddev_ns() << ',' << r.stats().mad_ns() << ',' << r.stats().ci_low_ns() << ','
        << r.stats().ci_high_ns() << ',' << r.stats().ci_half_width_percent() << ",0," << r.threads_used() << ','
        << r.peak_in_flight() << ",0.5,0.01,1200,64000,5,false,\"{" << absl::StrJoin(sample_text, ",")
        << "}\",copy-baseline,\\x" << absl::BytesToHexString(bytes) << ',' << run_created_at << '\n';
  }
  return "result_id, run_id, job_id, agent_id, case_id, scenario, workload, io_mode, strategy, "
         "strategy_label, threads, placement, status, stop_reason, sample_count, min_ns, "
         "median_ns, max_ns, mean_ns, stddev_ns, mad_ns, ci_low_ns, ci_high_ns, "
         "ci_half_width_percent, outliers, threads_used, peak_in_flight, cpu_user_seconds, "
         "cpu_system_seconds, allocations, allocated_bytes, peak_threads, throttled, samples_ns, "
         "engine_version, result, run_created_at";
}

// One ingestion round: every ingest agent sends its results for one run; returns
// results/s from the first result written to the last ack (0 on failure, reported).
// `selector` picks the ingesting agents, `acks` names how they are acknowledged.
// `cpu` gets the CPU each side spent from the submit to the last ack.
double IngestRound(const std::string& db_uri, SimFleet& fleet, ControlClient& control, pid_t coordinator_pid, int round,
                   const std::string& selector, const std::string& acks, Report& report, std::string* run_id,
                   CpuSplit* cpu) {
  const int agents = absl::GetFlag(FLAGS_ingest_agents);
  const int per_agent = absl::GetFlag(FLAGS_results_per_agent);
  const int samples = absl::GetFlag(FLAGS_samples_per_result);
  const uint64_t expected = static_cast<uint64_t>(agents) * per_agent;
  fleet.set_job_plan({.results_per_job = per_agent, .samples_per_result = samples});
  fleet.first_result_ns.store(0);
  const uint64_t acks_before = fleet.acks.load(), messages_before = fleet.ack_messages.load();
  const CpuSplit cpu0 = CpuSplit::Now(coordinator_pid);
  auto run = control.Submit(testing::ReducedS1Plan({"direct"}, {"arithmetic"}, 10, 2), selector);
  if (!run.ok()) {
    report.Add(absl::StrCat("ingestion: submit failed: ", run.status().ToString()));
    return 0;
  }
  *run_id = run->run_id();
  const bool all = Wait([&] { return fleet.acks.load() - acks_before >= expected; }, absl::Seconds(900));
  *cpu = CpuSplit::Now(coordinator_pid) - cpu0;
  const double seconds = (fleet.last_ack_ns.load() - fleet.first_result_ns.load()) / 1e9;
  const uint64_t acked = fleet.acks.load() - acks_before;
  auto rows =
      testing::PsqlInt(db_uri, absl::StrCat("SELECT count(*) FROM case_results WHERE run_id = '", run->run_id(), "'"));
  const double rate = acked / seconds;
  report.Add(absl::StrFormat(
      "ingestion round %d via coordinator, %s acks: %llu results from %d agents (%d samples each) acked in %.2f s "
      "= %.0f results/s%s, in %llu ack messages; rows in PostgreSQL %s; rejected acks %llu; CPU per 1000 results: %s",
      round, acks, static_cast<unsigned long long>(acked), agents, samples, seconds, rate, all ? "" : " (INCOMPLETE)",
      static_cast<unsigned long long>(fleet.ack_messages.load() - messages_before),
      rows.ok() ? absl::StrCat(*rows) : rows.status().ToString(),
      static_cast<unsigned long long>(fleet.rejected_acks.load()), cpu->PerThousand(acked)));
  (void)control.WaitRunEnded(run->run_id(), absl::Seconds(300));
  return all ? rate : 0;
}

void MeasureIngestion(const std::string& dir, const std::string& db_uri, SimFleet& fleet, ControlClient& control,
                      pid_t coordinator_pid, Report& report) {
  const int rounds = absl::GetFlag(FLAGS_ingest_rounds);
  const uint64_t expected =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_ingest_agents)) * absl::GetFlag(FLAGS_results_per_agent);
  // Rounds alternate between agents announcing CAPABILITY_RESULT_ACKS (batched acks, as
  // fleetmark-agent does) and agents that do not (one ResultAck per result, as agents
  // built before it), so both meet the same machine noise.
  // PostgreSQL's CPU seconds per 1 000 rows, per round, on each side.
  std::vector<double> rates, single_rates, pg_per_k, single_pg_per_k;
  std::string run_id;
  const double k = 1000.0 / static_cast<double>(expected);
  for (int round = 1; round <= rounds; ++round) {
    CpuSplit cpu;
    const double rate =
        IngestRound(db_uri, fleet, control, coordinator_pid, round, "label:i=1", "batched", report, &run_id, &cpu);
    if (rate <= 0) break;
    rates.push_back(rate);
    pg_per_k.push_back(cpu.postgres * k);
    std::string unused;
    const double single =
        IngestRound(db_uri, fleet, control, coordinator_pid, round, "label:i=2", "single", report, &unused, &cpu);
    if (single <= 0) break;
    single_rates.push_back(single);
    single_pg_per_k.push_back(cpu.postgres * k);
  }
  fleet.set_job_plan({.results_per_job = 0});
  if (rates.empty() || single_rates.empty()) return;

  // The same number of rows with COPY via psql, as many times, into (a) case_results
  // itself: the same table with its foreign keys, unique key and indexes (the target's
  // baseline), rows marked engine_version 'copy-baseline' and deleted between rounds;
  // (b) a copy of it without foreign keys (LIKE copies indexes, not constraints), for
  // reference. Each side is summarised by its median.
  auto ids =
      testing::Psql(db_uri, absl::StrCat("SELECT j.run_id || ',' || j.job_id || ',' || j.agent_id || ',' || "
                                         "r.created_at FROM jobs j JOIN runs r USING (run_id) WHERE j.run_id = '",
                                         run_id, "' LIMIT 1"));
  std::vector<std::string> id_parts = absl::StrSplit(absl::StripAsciiWhitespace(ids.value_or(",,,")), ',');
  if (id_parts.size() != 4) return;
  const std::string csv = dir + "/copy_rows.csv";
  const std::string columns = WriteCopyCsv(csv, static_cast<int>(expected), absl::GetFlag(FLAGS_samples_per_result),
                                           id_parts[0], id_parts[1], id_parts[2], id_parts[3]);
  auto created = testing::Psql(db_uri,
                               "DROP TABLE IF EXISTS copy_bench; CREATE TABLE copy_bench "
                               "(LIKE case_results INCLUDING DEFAULTS INCLUDING INDEXES)");
  if (!created.ok()) {
    report.Add(absl::StrCat("COPY: ", created.status().ToString()));
    return;
  }
  auto copy_rounds = [&](const std::string& table, const std::string& empty_sql,
                         std::vector<double>* copy_pg_per_k) -> std::vector<double> {
    std::vector<double> copy_rates;
    for (int round = 1; round <= rounds; ++round) {
      if (!testing::Psql(db_uri, empty_sql).ok()) break;
      const CpuSplit cpu0 = CpuSplit::Now(coordinator_pid);
      const absl::Time c0 = absl::Now();
      auto copied =
          testing::Psql(db_uri, absl::StrCat("\\copy ", table, " (", columns, ") FROM '", csv, "' WITH (FORMAT csv)"));
      const double copy_seconds = absl::ToDoubleSeconds(absl::Now() - c0);
      const CpuSplit cpu = CpuSplit::Now(coordinator_pid) - cpu0;
      copy_pg_per_k->push_back(cpu.postgres * k);
      if (!copied.ok()) {
        report.Add(absl::StrCat("COPY into ", table, " failed: ", copied.status().ToString()));
        return {};
      }
      copy_rates.push_back(expected / copy_seconds);
      report.Add(
          absl::StrFormat("COPY round %d via psql into %s: %llu rows in %.2f s = %.0f rows/s; CPU per 1000 "
                          "rows: %s",
                          round, table, static_cast<unsigned long long>(expected), copy_seconds, copy_rates.back(),
                          cpu.PerThousand(expected)));
    }
    return copy_rates;
  };
  std::vector<double> copy_pg_per_k, no_fk_pg_per_k;
  const std::vector<double> copy_rates =
      copy_rounds("case_results", "DELETE FROM case_results WHERE engine_version = 'copy-baseline'", &copy_pg_per_k);
  const std::vector<double> no_fk_rates = copy_rounds("copy_bench", "TRUNCATE copy_bench", &no_fk_pg_per_k);
  if (copy_rates.empty() || no_fk_rates.empty()) return;
  const double no_fk_rate = Percentile(no_fk_rates, 50);
  const double rate = Percentile(rates, 50), copy_rate = Percentile(copy_rates, 50);
  const double single_rate = Percentile(single_rates, 50);
  report.Add(absl::StrFormat(
      "ingestion: median %.0f results/s over %zu rounds with batched acks (%.0f with single acks); COPY into "
      "case_results median %.0f rows/s: coordinator ingestion = %.0f%% of COPY (single acks: %.0f%%; COPY into "
      "a copy without foreign keys: %.0f rows/s, ingestion = %.0f%% of it)",
      rate, rates.size(), single_rate, copy_rate, 100.0 * rate / copy_rate, 100.0 * single_rate / copy_rate, no_fk_rate,
      100.0 * rate / no_fk_rate));
  // The database is what a fleet shares: rows stored per PostgreSQL CPU-second is the
  // rate one database core sustains, whatever runs the agents and the coordinator.
  const double pg = Percentile(pg_per_k, 50), single_pg = Percentile(single_pg_per_k, 50);
  const double copy_pg = Percentile(copy_pg_per_k, 50);
  report.Add(absl::StrFormat(
      "ingestion per database core: PostgreSQL CPU per 1000 rows (median over rounds) %.3f s with batched acks, "
      "%.3f s with single acks, %.3f s for COPY into case_results: coordinator ingestion stores %.0f%% (single "
      "acks: %.0f%%) of COPY's rows per PostgreSQL CPU-second; load average %s",
      pg, single_pg, copy_pg, pg > 0 ? 100.0 * copy_pg / pg : 0, single_pg > 0 ? 100.0 * copy_pg / single_pg : 0,
      LoadAverage()));
}

// Counts of simulated agents, in this process or summed over simulator children.
struct SimCounts {
  size_t size = 0, welcomed = 0, open = 0;
  uint64_t refusals = 0;
  size_t unwelcomed_ended = 0;  // refused, or never connected
  std::string first_refusal;
  std::string ends;  // SimFleet::EndSummary, per process
};

SimCounts CountsOf(const SimFleet& fleet) {
  return {fleet.size(),          fleet.welcomed(),         fleet.open_streams(),
          fleet.refusals.load(), fleet.unwelcomed_ended(), fleet.first_refusal(),
          fleet.EndSummary()};
}

// "; streams ended: ..." for a report line ("" if none ended).
std::string EndsOf(const SimCounts& here, const SimCounts& there) {
  std::vector<std::string> parts;
  if (!here.ends.empty()) parts.push_back(absl::StrCat("main: ", here.ends));
  if (!there.ends.empty()) parts.push_back(there.ends);
  return parts.empty() ? "" : absl::StrCat("; streams ended: ", absl::StrJoin(parts, " | "));
}

// The hold agents in child processes of this binary (--hold_processes), each writing
// "size welcomed open refusals unwelcomed_ended<TAB>first refusal<TAB>end summary" to
// its status file every second.
class SimChildren {
 public:
  // Child i connects to targets[i % targets.size()].
  absl::Status Start(const std::string& dir, const std::vector<std::string>& targets, const std::string& token,
                     int agents, int processes) {
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return absl::InternalError("readlink /proc/self/exe failed");
    for (int i = 0; i < processes; ++i) {
      const int share = agents / processes + (i < agents % processes ? 1 : 0);
      const std::string status = absl::StrCat(dir, "/sim-", i, ".status");
      auto child = testing::Subprocess::Start(
          {std::string(self, n), absl::StrCat("--sim_child_target=", targets[i % targets.size()]),
           absl::StrCat("--sim_child_token=", token), absl::StrCat("--sim_child_prefix=simh", i),
           absl::StrCat("--sim_child_agents=", share), absl::StrCat("--sim_child_status=", status),
           absl::StrCat("--heartbeat_interval=", absl::FormatDuration(absl::GetFlag(FLAGS_heartbeat_interval)))},
          absl::StrCat(dir, "/sim-", i, ".log"));
      if (!child.ok()) return child.status();
      children_.push_back(*std::move(child));
      status_files_.push_back(status);
    }
    return absl::OkStatus();
  }
  SimCounts Counts() const {
    SimCounts sum;
    for (const std::string& path : status_files_) {
      std::ifstream in(path);
      std::string line;
      if (!std::getline(in, line)) continue;
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits('\t', 2));
      std::vector<std::string> numbers = absl::StrSplit(parts[0], ' ', absl::SkipEmpty());
      uint64_t v[5] = {};
      for (size_t i = 0; i < 5 && i < numbers.size(); ++i) (void)absl::SimpleAtoi(numbers[i], &v[i]);
      sum.size += v[0];
      sum.welcomed += v[1];
      sum.open += v[2];
      sum.refusals += v[3];
      sum.unwelcomed_ended += v[4];
      if (sum.first_refusal.empty() && parts.size() > 1) sum.first_refusal = parts[1];
      if (parts.size() > 2 && !parts[2].empty()) {
        absl::StrAppend(&sum.ends, sum.ends.empty() ? "" : " | ", path.substr(path.rfind('/') + 1), ": ", parts[2]);
      }
    }
    return sum;
  }
  double CpuSeconds() const {
    double total = 0;
    for (const auto& child : children_) total += bench::CpuSeconds(child->pid());
    return total;
  }
  uint64_t RssBytes() const {
    uint64_t total = 0;
    for (const auto& child : children_) total += bench::RssBytes(child->pid());
    return total;
  }
  size_t processes() const { return children_.size(); }
  void Stop() {
    for (auto& child : children_) child->Signal(SIGTERM);
    for (auto& child : children_) (void)child->Wait(absl::Seconds(30));
  }

 private:
  std::vector<std::unique_ptr<testing::Subprocess>> children_;
  std::vector<std::string> status_files_;
};

void HoldAgents(SimFleet& fleet, const SimChildren& children, ControlClient& control,
                const std::vector<pid_t>& coordinator_pids, Report& report) {
  auto cpu_of = [&] {
    std::vector<double> cpu;
    for (pid_t pid : coordinator_pids) cpu.push_back(CpuSeconds(pid));
    return cpu;
  };
  auto rss_of = [&] {
    std::vector<uint64_t> rss;
    for (pid_t pid : coordinator_pids) rss.push_back(RssBytes(pid));
    return rss;
  };
  const absl::Duration hold = absl::GetFlag(FLAGS_hold);
  const absl::Duration interval = absl::GetFlag(FLAGS_heartbeat_interval);
  const std::vector<double> cpu0 = cpu_of();
  const double self0 = SelfCpuSeconds(), children0 = children.CpuSeconds(), pg0 = PostgresCpuSeconds();
  const std::vector<uint64_t> rss_before = rss_of();
  // The fleets' heartbeat threads keep every agent alive; every 30 s (and at the end)
  // the first coordinator lists the agents: the fewest listed online is reported.
  auto listed_online = [&]() -> int64_t {
    absl::StatusOr<size_t> online = control.CountOnline("label:fleet=sim");
    return online.ok() ? static_cast<int64_t>(*online) : -1;
  };
  const absl::Time t0 = absl::Now();
  int64_t min_online = -1;
  int samples = 0, failed_lists = 0;
  while (absl::Now() - t0 < hold) {
    absl::SleepFor(std::min(absl::Seconds(30), hold - (absl::Now() - t0)));
    const int64_t online = listed_online();
    ++samples;
    if (online < 0) {
      ++failed_lists;
      continue;
    }
    if (min_online < 0 || online < min_online) min_online = online;
  }
  const double wall = absl::ToDoubleSeconds(absl::Now() - t0);
  const std::vector<double> cpu1 = cpu_of();
  const double sim_self = SelfCpuSeconds() - self0, sim_children = children.CpuSeconds() - children0;
  const double pg = PostgresCpuSeconds() - pg0;
  const int64_t online = listed_online();
  const SimCounts here = CountsOf(fleet), there = children.Counts();
  const size_t held = here.open + there.open, size = here.size + there.size;
  const uint64_t refusals = here.refusals + there.refusals;
  const std::vector<uint64_t> rss = rss_of();
  uint64_t rss_sum = 0, rss_before_sum = 0;
  double cpu = 0;
  std::vector<std::string> each;
  for (size_t i = 0; i < coordinator_pids.size(); ++i) {
    rss_sum += rss[i];
    rss_before_sum += rss_before[i];
    cpu += cpu1[i] - cpu0[i];
    each.push_back(absl::StrFormat("%s, %.1f%%", Mib(rss[i]), 100.0 * (cpu1[i] - cpu0[i]) / wall));
  }
  report.Add(absl::StrFormat(
      "held: %zu of %zu simulated agents with open streams after %.0f s of heartbeats every %s; "
      "listed online: %lld at the end, fewest %lld over %d lists (%d failed); %zu coordinator(s) RSS %s (%s at the "
      "start of the hold; %s per 1000 held), CPU %.1f%% of one core (each: %s); refusals %llu%s%s",
      held, size, wall, absl::FormatDuration(interval), static_cast<long long>(online),
      static_cast<long long>(min_online), samples, failed_lists, coordinator_pids.size(), Mib(rss_sum),
      Mib(rss_before_sum), Mib(held > 0 ? rss_sum * 1000 / held : 0), 100.0 * cpu / wall, absl::StrJoin(each, "; "),
      static_cast<unsigned long long>(refusals),
      refusals > 0 ? absl::StrCat(" (first: \"", here.refusals > 0 ? here.first_refusal : there.first_refusal, "\")")
                   : "",
      EndsOf(here, there)));
  report.Add(absl::StrFormat(
      "simulator CPU during the hold: %.1f%% of one core (this process %.1f%%, %zu child processes %.1f%%, their RSS "
      "%s); PostgreSQL CPU (liveness flushes, lists) %.1f%% of one core; load average %s",
      100.0 * (sim_self + sim_children) / wall, 100.0 * sim_self / wall, children.processes(),
      100.0 * sim_children / wall, Mib(children.RssBytes()), 100.0 * pg / wall, LoadAverage()));
}

// --sim_child_*: a simulator child of --hold_processes. Runs until killed.
int SimChildMain() {
  SimFleet fleet(absl::GetFlag(FLAGS_sim_child_target), absl::GetFlag(FLAGS_sim_child_token));
  fleet.StartHeartbeats(absl::GetFlag(FLAGS_heartbeat_interval));
  const std::string path = absl::GetFlag(FLAGS_sim_child_status);
  // A fleet comes online over time, not in one instant: at most --connect_in_flight
  // hellos of this process wait for their Welcome (or end) at once, every 100 ms.
  const int total = absl::GetFlag(FLAGS_sim_child_agents);
  const int in_flight = std::max(1, absl::GetFlag(FLAGS_connect_in_flight));
  int chunk = 0;
  absl::Time next_status = absl::InfinitePast();
  while (true) {
    const SimCounts counts = CountsOf(fleet);
    const int waiting = static_cast<int>(counts.size - counts.welcomed - counts.unwelcomed_ended);
    if (static_cast<int>(counts.size) < total && waiting < in_flight) {
      fleet.Add(std::min(in_flight - waiting, total - static_cast<int>(counts.size)),
                absl::StrCat(absl::GetFlag(FLAGS_sim_child_prefix), "c", chunk++), {{"fleet", "sim"}});
    }
    if (absl::Now() < next_status) {
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    next_status = absl::Now() + absl::Seconds(1);
    {
      std::ofstream out(path + ".tmp");
      out << counts.size << " " << counts.welcomed << " " << counts.open << " " << counts.refusals << " "
          << counts.unwelcomed_ended << "\t" << counts.first_refusal << "\t" << counts.ends << "\n";
    }
    std::rename((path + ".tmp").c_str(), path.c_str());
  }
}

int Main() {
  // Thousands of TCP connections on both sides of loopback.
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  signal(SIGPIPE, SIG_IGN);
  if (absl::GetFlag(FLAGS_sim_child_agents) > 0) return SimChildMain();
  const std::string dir = testing::MakeTempDir("fleetmark-bench");
  Report report;

  absl::StatusOr<testing::BenchDatabase> bench_database = testing::OpenBenchDatabase();
  if (!bench_database.ok()) {
    std::cerr << bench_database.status() << "\n";
    return 1;
  }
  const std::string db_uri = bench_database->uri;

  CoordinatorConfig config;
  config.database_uri = db_uri;
  config.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  config.job_lease = absl::Seconds(120);
  config.sweep_interval = absl::Seconds(1);
  config.extra_flags = {absl::StrCat("--executor_threads=", absl::GetFlag(FLAGS_executor_threads)),
                        absl::StrCat("--db_pool_size=", absl::GetFlag(FLAGS_db_pool_size)),
                        absl::StrCat("--max_agent_streams=", absl::GetFlag(FLAGS_max_agent_streams))};
  auto coordinator = CoordinatorProcess::Start(dir, config);
  if (!coordinator.ok()) {
    std::cerr << coordinator.status() << "\n";
    return 1;
  }
  ControlClient control((*coordinator)->address(), config.admin_token);
  const pid_t coordinator_pid = (*coordinator)->process()->pid();
  report.Add(absl::StrCat("machine: ", sysconf(_SC_NPROCESSORS_ONLN), " CPUs; coordinator at ",
                          (*coordinator)->address(), ", PostgreSQL ", db_uri));

  // --hold_coordinators: more coordinators on the same database, for the hold only.
  std::vector<std::unique_ptr<CoordinatorProcess>> more;
  std::vector<std::string> hold_targets = {absl::StrCat("ipv4:", (*coordinator)->address())};
  std::vector<pid_t> coordinator_pids = {coordinator_pid};
  for (int i = 1; i < absl::GetFlag(FLAGS_hold_coordinators); ++i) {
    const std::string sub = absl::StrCat(dir, "/coordinator-", i);
    std::filesystem::create_directories(sub);
    auto started = CoordinatorProcess::Start(sub, config);
    if (!started.ok()) {
      std::cerr << "coordinator " << i << ": " << started.status() << "\n";
      return 1;
    }
    hold_targets.push_back(absl::StrCat("ipv4:", (*started)->address()));
    coordinator_pids.push_back((*started)->process()->pid());
    more.push_back(*std::move(started));
  }
  const bool hold_only = absl::GetFlag(FLAGS_hold_only);

  if (!hold_only) MeasureRealAgent(dir, **coordinator, control, report);

  SimFleet fleet(absl::StrCat("ipv4:", (*coordinator)->address()), config.enrollment_token);
  const int total = absl::GetFlag(FLAGS_agents);
  const int dispatch = hold_only ? 0 : std::min(total, absl::GetFlag(FLAGS_dispatch_agents));
  const int ingest = std::min(dispatch, absl::GetFlag(FLAGS_ingest_agents));
  const absl::Time c0 = absl::Now();
  fleet.StartHeartbeats(absl::GetFlag(FLAGS_heartbeat_interval));
  fleet.Add(ingest, "simi", {{"fleet", "sim"}, {"d", "1"}, {"i", "1"}});
  fleet.Add(dispatch - ingest, "simd", {{"fleet", "sim"}, {"d", "1"}});
  // As many again that acknowledge results one by one (agents older than
  // CAPABILITY_RESULT_ACKS), outside the fan-out.
  fleet.set_protocol({.batched_acks = false});
  fleet.Add(ingest, "simo", {{"fleet", "sim"}, {"i", "2"}});
  fleet.set_protocol({});
  const int connecting = dispatch + ingest;          // of --agents
  const int held = std::max(0, total - connecting);  // added for the hold
  const bool connected = Wait([&] { return fleet.welcomed() >= static_cast<size_t>(connecting); }, absl::Seconds(600));
  report.Add(absl::StrFormat("connect: %zu of %d agents welcomed in %.1f s%s", fleet.welcomed(), connecting,
                             absl::ToDoubleSeconds(absl::Now() - c0), connected ? "" : " (INCOMPLETE)"));

  if (!hold_only) {
    MeasureDispatch(fleet, control, dispatch, report);
    MeasureIngestion(dir, db_uri, fleet, control, coordinator_pid, report);
  }

  const absl::Time h0 = absl::Now();
  SimChildren children;
  if (const int processes = absl::GetFlag(FLAGS_hold_processes); processes > 0) {
    if (absl::Status started = children.Start(dir, hold_targets, config.enrollment_token, held, processes);
        !started.ok()) {
      std::cerr << started << "\n";
      return 1;
    }
  } else {
    fleet.Add(held, "simh", {{"fleet", "sim"}});
  }
  // Every agent welcomed, or refused at the coordinator's stream limit (it does not retry).
  auto settled = [&] {
    const SimCounts here = CountsOf(fleet), there = children.Counts();
    const size_t all = static_cast<size_t>(connecting + held), welcomed = here.welcomed + there.welcomed;
    return welcomed + here.refusals + there.refusals >= all ||
           welcomed + here.unwelcomed_ended + there.unwelcomed_ended >= all;
  };
  const bool all_connected = Wait(settled, absl::Seconds(900));
  const SimCounts here = CountsOf(fleet), there = children.Counts();
  report.Add(absl::StrFormat(
      "connect: %zu of %d agents welcomed, %llu refused (%.1f s for the last %d, %zu simulator "
      "processes)%s%s",
      here.welcomed + there.welcomed, connecting + held,
      static_cast<unsigned long long>(here.refusals + there.refusals), absl::ToDoubleSeconds(absl::Now() - h0), held,
      children.processes(), all_connected ? "" : " (INCOMPLETE)", EndsOf(here, there)));
  HoldAgents(fleet, children, control, coordinator_pids, report);

  children.Stop();
  fleet.StopAll();
  fleet.WaitAllDone(absl::Seconds(60));
  std::cout << "\n== fleet benchmark summary\n" << absl::StrJoin(report.lines, "\n") << std::endl;
  more.clear();
  coordinator->reset();
  testing::RemoveTree(dir);
  return 0;
}

}  // namespace
}  // namespace fleetmark::bench

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex (gRPC locks with
  // them too) would run deadlock-cycle detection (GraphCycles) on each acquisition:
  // ~5% of a fan-out's CPU in the fleet benchmark. Lock order is checked in the tests.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  return fleetmark::bench::Main();
}
