// PostgreSQL implementation of WebReader: parameterised, read-only queries on the
// coordinator's schema (migrations/0001_init.sql) plus the web view's indexes
// (migrations/0050_web_indexes.sql). Lists read the statistic columns, never the raw
// samples; only GetResult (and non-batch scenario rows) decode the stored result proto.
// A job re-run after its agent was lost stores a second result per case; run results,
// result counts and history show only the newest result per (job_id, case_id), as the
// CLI's export, compare and runs show do (Store::ExportResults).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/same_host.h"
#include "coordinator/store/connection_pool.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"
#include "coordinator/store/web_reader.h"
#include "engine/common/scenario_result.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::store {
namespace {

using internal::IsUuid;
using internal::UnixNs;

constexpr char kListAgents[] = "fm_web_list_agents";
constexpr char kListRuns[] = "fm_web_list_runs";
constexpr char kGetRun[] = "fm_web_get_run";
constexpr char kRunJobs[] = "fm_web_run_jobs";
constexpr char kRunResults[] = "fm_web_run_results";
constexpr char kRunAgentResults[] = "fm_web_run_agent_results";
constexpr char kGetResult[] = "fm_web_get_result";
constexpr char kLatestRun[] = "fm_web_latest_run";
constexpr char kCaseIds[] = "fm_web_case_ids";
constexpr char kHistory[] = "fm_web_history";
constexpr char kListSchedules[] = "fm_web_list_schedules";

// Columns of a result row (order matters: see ResultFromRow). The stored proto is read
// for every registered scenario (the text[] parameter `scenarios_param` holds
// ScenarioList()): the output of memory points, load and fanout lives there, and batch
// cases' process medians, which the verdict compares; and for the synthetic workload,
// whose parameters and swept names (the strategy map's points) live there too. Rows of
// no registered scenario (an empty or unknown name) read none.
std::string ResultColumns(std::string_view scenarios_param) {
  return absl::StrCat("c.result_id::text, c.agent_id::text, a.name, c.run_id::text, c.job_id::text, c.case_id, ",
                      "c.scenario, c.workload, c.io_mode, c.strategy, c.strategy_label, c.threads, c.placement, ",
                      "c.status, c.message, c.stop_reason, c.sample_count, c.min_ns, c.median_ns, c.max_ns, ",
                      "c.mean_ns, c.stddev_ns, c.mad_ns, c.ci_low_ns, c.ci_high_ns, c.ci_half_width_percent, ",
                      "c.outliers, c.threads_used, c.peak_in_flight, c.cpu_user_seconds, c.cpu_system_seconds, ",
                      "c.allocations, c.allocated_bytes, c.peak_threads, c.rss_delta_bytes, c.throttled, ",
                      UnixNs("c.started_at"), ", ", UnixNs("c.finished_at"), ", c.engine_version, ",
                      "CASE WHEN c.scenario = ANY(", std::string(scenarios_param),
                      "::text[]) OR c.workload = 'synthetic' THEN c.result END, ",
                      "c.emulated, c.fingerprint, c.repetitions");
}

// The registry's scenario names as a text[] parameter (ResultColumns' `scenarios_param`).
const std::string& ScenarioList() {
  static const std::string list = internal::TextArray(engine::ScenarioNames());
  return list;
}

template <typename T>
T Or(const pqxx::field& field, T fallback) {
  return field.is_null() ? fallback : field.as<T>();
}

std::string Text(const pqxx::field& field) { return field.is_null() ? "" : field.c_str(); }

v1::CaseStatus StatusFromText(const std::string& text) {
  v1::CaseStatus status = v1::CASE_STATUS_UNSPECIFIED;
  std::string name = absl::AsciiStrToUpper(text);
  if (!absl::StartsWith(name, "CASE_STATUS_")) name = absl::StrCat("CASE_STATUS_", name);
  return v1::CaseStatus_Parse(name, &status) ? status : v1::CASE_STATUS_UNSPECIFIED;
}

v1::StopReason StopReasonFromText(const std::string& text) {
  v1::StopReason reason = v1::STOP_REASON_UNSPECIFIED;
  std::string name = absl::AsciiStrToUpper(text);
  if (!absl::StartsWith(name, "STOP_REASON_")) name = absl::StrCat("STOP_REASON_", name);
  return v1::StopReason_Parse(name, &reason) ? reason : v1::STOP_REASON_UNSPECIFIED;
}

// A run row of internal::RunColumns() (one read model with Store::GetRun).
WebRun RunFromRow(const pqxx::row& row) {
  const v1::RunInfo info = internal::RunInfoFromRow(row);
  WebRun run;
  run.run_id = info.run_id();
  run.plan_name = info.plan_name();
  run.status = info.status();
  run.selector = info.selector();
  run.submitted_by = info.submitted_by();
  run.quick = info.quick();
  run.created_unix_ns = info.created_unix_ns();
  run.finished_unix_ns = info.finished_unix_ns();
  run.results = info.results();
  run.imported = info.imported();
  return run;
}

// A job row: the run id, then internal::JobColumns().
WebJob JobFromRow(const pqxx::row& row) {
  const v1::JobInfo info = internal::JobInfoFromRow(row, 1);
  WebJob job;
  job.job_id = info.job_id();
  job.agent_id = Text(row[2]);
  job.agent_name = info.agent_name();
  job.status = info.status();
  job.message = info.message();
  job.attempts = info.attempts();
  job.cases_done = info.cases_done();
  job.cases_total = info.cases_total();
  return job;
}

WebResult ResultFromRow(const pqxx::row& row) {
  WebResult out;
  v1::CaseResult& r = out.result;
  r.set_result_id(Text(row[0]));
  out.agent_id = Text(row[1]);
  out.agent_name = Text(row[2]);
  r.set_run_id(Text(row[3]));
  r.set_job_id(Text(row[4]));
  v1::CaseSpec& spec = *r.mutable_spec();
  spec.set_case_id(Text(row[5]));
  spec.set_scenario(Text(row[6]));
  spec.set_workload(Text(row[7]));
  spec.set_io_mode(Text(row[8]));
  spec.mutable_strategy()->set_name(Text(row[9]));
  spec.mutable_strategy()->set_label(Text(row[10]));
  spec.mutable_strategy()->set_threads(Or<uint32_t>(row[11], 0));
  spec.set_placement(Text(row[12]));
  r.set_status(StatusFromText(Text(row[13])));
  r.set_message(Text(row[14]));
  r.set_stop_reason(StopReasonFromText(Text(row[15])));
  v1::Statistics& stats = *r.mutable_stats();
  stats.set_count(Or<uint64_t>(row[16], 0));
  stats.set_min_ns(Or<double>(row[17], 0));
  stats.set_median_ns(Or<double>(row[18], 0));
  stats.set_max_ns(Or<double>(row[19], 0));
  stats.set_mean_ns(Or<double>(row[20], 0));
  stats.set_stddev_ns(Or<double>(row[21], 0));
  stats.set_mad_ns(Or<double>(row[22], 0));
  stats.set_ci_low_ns(Or<double>(row[23], 0));
  stats.set_ci_high_ns(Or<double>(row[24], 0));
  stats.set_ci_half_width_percent(Or<double>(row[25], 0));
  stats.set_outliers(Or<uint64_t>(row[26], 0));
  r.set_threads_used(Or<uint32_t>(row[27], 0));
  r.set_peak_in_flight(Or<uint32_t>(row[28], 0));
  v1::Counters& counters = *r.mutable_counters();
  counters.set_cpu_user_seconds(Or<double>(row[29], 0));
  counters.set_cpu_system_seconds(Or<double>(row[30], 0));
  counters.set_allocations(Or<uint64_t>(row[31], 0));
  counters.set_allocated_bytes(Or<uint64_t>(row[32], 0));
  counters.set_peak_threads(Or<uint32_t>(row[33], 0));
  counters.set_rss_delta_bytes(Or<int64_t>(row[34], 0));
  // The agent's Counters.repetitions (migrations/0013): all timed repetitions, also the
  // transient ones not in the samples, the CLI's denominator of CPU per repetition. Rows
  // from before that column have one sample per repetition as far as the row tells.
  counters.set_repetitions(Or<uint64_t>(row[42], stats.count()));
  r.set_throttled(Or<bool>(row[35], false));
  r.set_started_unix_ns(Or<int64_t>(row[36], 0));
  r.set_finished_unix_ns(Or<int64_t>(row[37], 0));
  r.set_engine_version(Text(row[38]));
  r.set_emulated(Or<bool>(row[40], false));
  if (!row[41].is_null()) internal::ParseProtoField(row[41], r.mutable_fingerprint());  // else unknown
  if (!row[39].is_null()) {
    v1::CaseResult full;
    if (internal::ParseProtoField(row[39], &full)) {
      if (full.spec().has_synthetic()) {
        *spec.mutable_synthetic() = full.spec().synthetic();
        *spec.mutable_swept() = full.spec().swept();
      }
      engine::CopyScenarioResult(full, &r);
      // What the verdict compares (engine/measure/verdict.h): the process medians, their
      // rounds, and whether other work contended the device.
      *r.mutable_process_medians_ns() = full.process_medians_ns();
      *r.mutable_process_rounds() = full.process_rounds();
      r.set_contended(full.contended());
      r.set_other_cpu_share(full.other_cpu_share());
      // ... and what bounds that work's share (engine/measure/contention_evidence.h).
      r.set_wakeup_delay_ns(full.wakeup_delay_ns());
      r.set_preemption_delay_ns(full.preemption_delay_ns());
      r.mutable_counters()->set_voluntary_context_switches(full.counters().voluntary_context_switches());
      r.mutable_counters()->set_involuntary_context_switches(full.counters().involuntary_context_switches());
      r.set_quick(full.quick());
    }
  }
  return out;
}

// Runs `fn(txn)` on a pooled connection in autocommit mode: the web view's queries are
// single reads, so BEGIN/COMMIT would only add two round trips per request. A read that
// failed because its connection was broken (Unavailable: the server restarted or
// closed it) is retried once on a freshly opened connection, after every idle one was
// dropped too (a restart breaks them all): the first request after a PostgreSQL
// restart is answered. Reads change nothing, so running one twice is harmless.
template <typename Fn>
auto Read(ConnectionPool& pool, std::string_view context, Fn&& fn)
    -> decltype(fn(std::declval<pqxx::nontransaction&>())) {
  using Result = decltype(fn(std::declval<pqxx::nontransaction&>()));
  absl::Status status;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto lease = pool.Acquire();
    if (!lease.ok()) return Result(lease.status());
    try {
      pqxx::nontransaction txn(**lease);
      return fn(txn);
    } catch (const std::exception& e) {
      status = StatusFromPqxx(e, context);
      internal::DiscardIfBroken(pool, *lease, status);
      if (!absl::IsUnavailable(status)) return Result(status);
    }
  }
  return Result(status);
}

absl::Status NotFound(std::string_view what, std::string_view id) {
  return absl::NotFoundError(absl::StrCat(std::string(what), " ", std::string(id), " not found"));
}

class PgWebReader final : public WebReader {
 public:
  explicit PgWebReader(std::unique_ptr<ConnectionPool> pool, int online_window_seconds)
      : pool_(std::move(pool)), online_window_seconds_(online_window_seconds) {
    Prepare();
  }

  absl::StatusOr<std::vector<WebAgent>> ListAgents() override {
    return Read(*pool_, "list agents", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<WebAgent>> {
      std::vector<WebAgent> agents;
      for (const pqxx::row& row : txn.exec_prepared(kListAgents, online_window_seconds_)) {
        WebAgent& agent = agents.emplace_back();
        agent.agent_id = Text(row[0]);
        agent.name = Text(row[1]);
        agent.state = Text(row[2]);
        agent.last_seen_unix_ns = Or<int64_t>(row[3], 0);
        internal::ParseProtoField(row[4], &agent.host);
        agent.labels = internal::ParseLabelsJson(Text(row[5]));
        agent.running_job_id = Text(row[6]);
        agent.health = Text(row[7]);
        agent.quarantine_reason = Text(row[8]);
        agent.quarantined_unix_ns = Or<int64_t>(row[9], 0);
        agent.noise_percent = Or<double>(row[10], -1);
        agent.noise_nights = Or<int>(row[11], 0);
        agent.machine_id = Text(row[12]);
        agent.boot_id = Text(row[13]);
        agent.exclusive_cpus = Or<bool>(row[14], false);
      }
      // Which agents share a host (removed agents neither count nor are counted).
      std::vector<scheduler::HostIdentity> hosts;
      for (const WebAgent& a : agents) {
        hosts.push_back(a.state == "removed" ? scheduler::HostIdentity{}
                                             : scheduler::HostIdentity{a.machine_id, a.boot_id});
      }
      const std::vector<std::vector<size_t>> same = scheduler::SameHostAs(hosts);
      for (size_t i = 0; i < agents.size(); ++i) {
        for (size_t j : same[i]) agents[i].same_host_as.push_back(agents[j].name);
      }
      return agents;
    });
  }

  absl::StatusOr<std::string> ResolveRunId(std::string_view id_or_prefix) override {
    return Read(*pool_, "resolve run id",
                [&](pqxx::nontransaction& txn) { return internal::ResolveRunId(txn, std::string(id_or_prefix)); });
  }

  absl::StatusOr<std::vector<std::string>> RunIdsWithPrefix(std::string_view id_or_prefix, int limit) override {
    if (limit < 1 || limit > 100) return absl::InvalidArgumentError(absl::StrCat("limit: 1..100, got ", limit));
    return Read(*pool_, "run ids with prefix", [&](pqxx::nontransaction& txn) {
      return internal::RunIdsWithPrefix(txn, std::string(id_or_prefix), limit);
    });
  }

  absl::StatusOr<std::vector<WebRun>> ListRuns(int limit) override {
    if (limit < 1 || limit > 1000) {
      return absl::InvalidArgumentError(absl::StrCat("limit: 1 <= limit <= 1000, got ", limit));
    }
    return Read(*pool_, "list runs", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<WebRun>> {
      std::vector<WebRun> runs;
      std::vector<std::string> ids;
      for (const pqxx::row& row : txn.exec_prepared(kListRuns, limit)) {
        runs.push_back(RunFromRow(row));
        ids.push_back(runs.back().run_id);
      }
      AttachJobs(txn, ids, runs);
      return runs;
    });
  }

  absl::StatusOr<WebRun> GetRun(std::string_view run_id) override {
    if (!IsUuid(run_id)) return NotFound("run", run_id);
    return Read(*pool_, "get run", [&](pqxx::nontransaction& txn) -> absl::StatusOr<WebRun> {
      pqxx::result rows = txn.exec_prepared(kGetRun, std::string(run_id));
      if (rows.empty()) return NotFound("run", run_id);
      std::vector<WebRun> runs = {RunFromRow(rows[0])};
      AttachJobs(txn, {runs[0].run_id}, runs);
      return std::move(runs[0]);
    });
  }

  absl::StatusOr<std::vector<WebResult>> RunResults(std::string_view run_id, std::string_view agent_id) override {
    if (!IsUuid(run_id)) return NotFound("run", run_id);
    if (!agent_id.empty() && !IsUuid(agent_id)) return NotFound("agent", agent_id);
    return Read(*pool_, "run results", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<WebResult>> {
      pqxx::result rows = agent_id.empty() ? txn.exec_prepared(kRunResults, std::string(run_id), ScenarioList())
                                           : txn.exec_prepared(kRunAgentResults, std::string(run_id),
                                                               std::string(agent_id), ScenarioList());
      if (rows.empty() && txn.exec_prepared(kGetRun, std::string(run_id)).empty()) {
        return NotFound("run", run_id);
      }
      std::vector<WebResult> results;
      results.reserve(rows.size());
      for (const pqxx::row& row : rows) results.push_back(ResultFromRow(row));
      // By agent name, then case id in natural order (cpu_ns=20000 before cpu_ns=100000).
      std::stable_sort(results.begin(), results.end(), [](const WebResult& a, const WebResult& b) {
        if (a.agent_name != b.agent_name) return a.agent_name < b.agent_name;
        return NaturalLess(a.result.spec().case_id(), b.result.spec().case_id());
      });
      return results;
    });
  }

  absl::StatusOr<WebResult> GetResult(std::string_view result_id) override {
    if (!IsUuid(result_id)) return NotFound("result", result_id);
    return Read(*pool_, "get result", [&](pqxx::nontransaction& txn) -> absl::StatusOr<WebResult> {
      pqxx::result rows = txn.exec_prepared(kGetResult, std::string(result_id), ScenarioList());
      if (rows.empty()) return NotFound("result", result_id);
      WebResult out = ResultFromRow(rows[0]);
      v1::CaseResult full;
      // The stored proto: the column after ResultColumns().
      if (!internal::ParseProtoField(rows[0][rows[0].size() - 1], &full)) {
        return absl::DataLossError(absl::StrCat("result ", std::string(result_id), ": stored proto does not parse"));
      }
      // The stored proto is the agent's original, with samples and environment; whether
      // it was measured under emulation is the coordinator's record, not the agent's.
      full.set_emulated(out.result.emulated());
      out.result = std::move(full);
      return out;
    });
  }

  absl::StatusOr<std::string> LatestRunWithResults(std::string_view agent_id) override {
    if (!IsUuid(agent_id)) return NotFound("agent", agent_id);
    return Read(*pool_, "latest run", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::string> {
      pqxx::result rows = txn.exec_prepared(kLatestRun, std::string(agent_id));
      if (rows.empty()) return absl::NotFoundError(absl::StrCat("agent ", std::string(agent_id), " has no results"));
      return Text(rows[0][0]);
    });
  }

  absl::StatusOr<std::vector<std::string>> CaseIds(const std::vector<std::string>& agent_ids) override {
    for (const std::string& id : agent_ids) {
      if (!IsUuid(id)) return NotFound("agent", id);
    }
    return Read(*pool_, "case ids", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<std::string>> {
      std::vector<std::string> ids;
      for (const pqxx::row& row : txn.exec_prepared(kCaseIds, internal::UuidArray(agent_ids)))
        ids.push_back(Text(row[0]));
      return ids;
    });
  }

  absl::StatusOr<std::vector<ChangeRecord>> ListChanges(const ChangeFilter& filter) override {
    return Read(*pool_, "list changes", [&](pqxx::nontransaction& txn) { return internal::QueryChanges(txn, filter); });
  }

  absl::StatusOr<std::vector<WebSchedule>> ListSchedules() override {
    return Read(*pool_, "list schedules", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<WebSchedule>> {
      std::vector<WebSchedule> schedules;
      for (const pqxx::row& row : txn.exec_prepared(kListSchedules)) {
        WebSchedule& s = schedules.emplace_back();
        s.name = Text(row[0]);
        s.cron = Text(row[1]);
        s.plan_name = Text(row[2]);
        s.selector = Text(row[3]);
        s.quick = Or<bool>(row[4], false);
        s.filter = Text(row[5]);
        s.paused = Or<bool>(row[6], false);
        s.next_fire_unix_ns = Or<int64_t>(row[7], 0);
        s.last_fire_slot_unix_ns = Or<int64_t>(row[8], 0);
        // As `schedules list`: the run it made, else why the slot made none.
        if (!row[9].is_null()) {
          s.last_fire_run_id = Text(row[9]);
          s.last_fire_outcome = absl::StrCat("run ", s.last_fire_run_id);
        } else if (s.last_fire_slot_unix_ns != 0) {
          s.last_fire_outcome = Text(row[10]).empty() ? "no run" : Text(row[10]);
        }
      }
      return schedules;
    });
  }

  absl::StatusOr<std::vector<HistoryPoint>> CaseHistory(std::string_view case_id,
                                                        const std::vector<std::string>& agent_ids, int limit,
                                                        bool scheduled_only) override {
    if (limit < 1 || limit > 1000) {
      return absl::InvalidArgumentError(absl::StrCat("limit: 1 <= limit <= 1000, got ", limit));
    }
    std::vector<std::string> valid;
    for (const std::string& id : agent_ids) {
      if (IsUuid(id)) valid.push_back(id);
    }
    if (valid.empty() || case_id.empty()) return std::vector<HistoryPoint>{};
    return Read(*pool_, "case history", [&](pqxx::nontransaction& txn) -> absl::StatusOr<std::vector<HistoryPoint>> {
      std::vector<HistoryPoint> points;
      pqxx::result rows =
          txn.exec_prepared(kHistory, std::string(case_id), internal::UuidArray(valid), scheduled_only, limit);
      for (const pqxx::row& row : rows) {
        HistoryPoint& p = points.emplace_back();
        p.agent_id = Text(row[0]);
        p.agent_name = Text(row[1]);
        p.run_id = Text(row[2]);
        p.result_id = Text(row[3]);
        p.run_created_unix_ns = Or<int64_t>(row[4], 0);
        p.median_ns = Or<double>(row[5], 0);
        p.ci_low_ns = Or<double>(row[6], 0);
        p.ci_high_ns = Or<double>(row[7], 0);
        p.status = StatusFromText(Text(row[8]));
        p.emulated = Or<bool>(row[9], false);
        if (!row[10].is_null()) internal::ParseProtoField(row[10], &p.fingerprint);
      }
      return points;
    });
  }

 private:
  void Prepare() {
    pool_->AddPreparedStatement(
        kListAgents, absl::StrCat("SELECT a.agent_id::text, a.name, "
                                  "CASE WHEN a.removed_at IS NOT NULL THEN 'removed' WHEN a.imported THEN 'imported' "
                                  "WHEN a.state = 'online' AND a.last_seen > now() - make_interval(secs => $1) "
                                  "THEN 'online' ELSE 'offline' END, ",
                                  UnixNs("a.last_seen"),
                                  ", a.host, a.labels::text, "
                                  "(SELECT j.job_id::text FROM jobs j WHERE j.agent_id = a.agent_id "
                                  " AND j.status IN ('assigned', 'running') LIMIT 1), "
                                  "a.health, a.quarantine_reason, ",
                                  UnixNs("a.quarantined_at"),
                                  ", a.noise_percent, a.noise_nights, a.machine_id, a.boot_id, a.exclusive_cpus "
                                  "FROM agents a ORDER BY a.name"));
    pool_->AddPreparedStatement(kListRuns, absl::StrCat("SELECT ", internal::RunColumns(),
                                                        " FROM runs r ORDER BY r.created_at DESC, r.run_id LIMIT $1"));
    pool_->AddPreparedStatement(
        kGetRun, absl::StrCat("SELECT ", internal::RunColumns(), " FROM runs r WHERE r.run_id = $1::uuid"));
    pool_->AddPreparedStatement(kRunJobs, absl::StrCat("SELECT j.run_id::text, ", internal::JobColumns(),
                                                       " FROM jobs j JOIN agents a ON a.agent_id = j.agent_id "
                                                       "WHERE j.run_id = ANY($1::uuid[]) ORDER BY ",
                                                       internal::kJobsOrder));
    // The run's rows (case_results_run), newest attempt per (job, case), then by agent
    // name (column 3) and case id (column 6) of ResultColumns().
    pool_->AddPreparedStatement(
        kRunResults, absl::StrCat("SELECT * FROM (SELECT DISTINCT ON (c.job_id, c.case_id) ", ResultColumns("$2"),
                                  " FROM case_results c JOIN agents a ON a.agent_id = c.agent_id "
                                  "WHERE c.run_id = $1::uuid ORDER BY ",
                                  internal::kNewestPerJobCase, ") latest ORDER BY 3, 6"));
    pool_->AddPreparedStatement(
        kRunAgentResults, absl::StrCat("SELECT * FROM (SELECT DISTINCT ON (c.job_id, c.case_id) ", ResultColumns("$3"),
                                       " FROM case_results c JOIN agents a ON a.agent_id = c.agent_id "
                                       "WHERE c.run_id = $1::uuid AND c.agent_id = $2::uuid ORDER BY ",
                                       internal::kNewestPerJobCase, ") latest ORDER BY 6"));
    pool_->AddPreparedStatement(kGetResult,
                                absl::StrCat("SELECT ", ResultColumns("$2"),
                                             ", c.result FROM case_results c "
                                             "JOIN agents a ON a.agent_id = c.agent_id WHERE c.result_id = $1::uuid"));
    // The newest finished ('done') run, else the newest run at all (a cancelled or
    // running run holds only part of the cases): done runs newest first
    // (runs_done_created), then all runs (runs_created), each probing case_results_run in
    // the run's own partition (run_created_at) and stopping at the first with results;
    // the second branch runs only when the first finds none.
    const std::string has_results =
        "EXISTS (SELECT 1 FROM case_results c WHERE c.run_id = r.run_id AND c.run_created_at = r.created_at "
        "AND c.agent_id = $1::uuid)";
    pool_->AddPreparedStatement(kLatestRun,
                                absl::StrCat("SELECT run_id::text FROM ("
                                             "(SELECT r.run_id FROM runs r WHERE r.status = 'done' AND ",
                                             has_results,
                                             " ORDER BY r.created_at DESC LIMIT 1) UNION ALL "
                                             "(SELECT r.run_id FROM runs r WHERE ",
                                             has_results, " ORDER BY r.created_at DESC LIMIT 1)) newest LIMIT 1"));
    // The case ids of the agents' results, by a loose index scan: per agent a recursive
    // CTE jumping from one case id to the next, each step one seek per partition on
    // case_results_web_history_newest (agent_id, case_id, ...), where DISTINCT read every
    // row (10 M results: 30 s).
    pool_->AddPreparedStatement(
        kCaseIds,
        "WITH RECURSIVE ids AS ("
        "  SELECT w.agent_id, (SELECT c.case_id FROM case_results c"
        "    WHERE c.agent_id = w.agent_id ORDER BY c.case_id LIMIT 1) AS case_id"
        "  FROM unnest($1::uuid[]) AS w(agent_id)"
        "  UNION ALL"
        "  SELECT ids.agent_id, (SELECT c.case_id FROM case_results c"
        "    WHERE c.agent_id = ids.agent_id AND c.case_id > ids.case_id ORDER BY c.case_id LIMIT 1)"
        "  FROM ids WHERE ids.case_id IS NOT NULL) "
        "SELECT DISTINCT case_id FROM ids WHERE case_id IS NOT NULL ORDER BY 1");
    // As Store::ListSchedules: the latest fire is the newest row of schedule_fires' key.
    pool_->AddPreparedStatement(
        kListSchedules,
        absl::StrCat("SELECT s.name, s.cron, p.name, s.selector, s.quick, s.filter, s.paused, ",
                     UnixNs("s.next_fire_at"), ", ", UnixNs("f.slot"),
                     ", f.run_id::text, f.note FROM schedules s JOIN plans p ON p.plan_id = s.plan_id "
                     "LEFT JOIN LATERAL (SELECT slot, run_id, note FROM schedule_fires "
                     "WHERE schedule_id = s.schedule_id ORDER BY slot DESC LIMIT 1) f ON true ORDER BY s.name"));
    // Per agent, the newest $4 runs holding the case, one point per job (its newest
    // attempt): case_results_web_history_newest walked newest run first in every
    // partition and merged (Merge Append), a job's newest attempt first within its run,
    // each row's run looked up (runs pkey, for the schedule filter), stopped after $4
    // jobs. The LIMIT sits on the DISTINCT ON itself: in an outer query the planner costs
    // the subquery for all its rows and, past ~5 M results, sorts every run of the case
    // instead (EXPLAIN ANALYZE at 10 M: 1.4 s against 20 ms). A job is in one run, so
    // DISTINCT ON (run_created_at, job_id) is one row per job, and the schedule filter
    // (per run) may come before it. `emulated` and `fingerprint`, not in the index, are
    // read from the heap for the kept rows.
    pool_->AddPreparedStatement(
        kHistory,
        absl::StrCat("SELECT x.agent_id::text, a.name, x.run_id::text, x.result_id::text, ", UnixNs("x.run_created_at"),
                     ", x.median_ns, x.ci_low_ns, x.ci_high_ns, x.status, x.emulated, x.fingerprint "
                     "FROM unnest($2::uuid[]) WITH ORDINALITY AS wanted(agent_id, ord) "
                     "JOIN agents a ON a.agent_id = wanted.agent_id "
                     "CROSS JOIN LATERAL ("
                     "  SELECT DISTINCT ON (c.run_created_at, c.job_id) c.agent_id, c.run_id, c.result_id, "
                     "    c.median_ns, c.ci_low_ns, c.ci_high_ns, c.status, c.emulated, c.fingerprint, c.run_created_at"
                     "  FROM case_results c JOIN runs r ON r.run_id = c.run_id"
                     "  WHERE c.case_id = $1 AND c.agent_id = wanted.agent_id"
                     "    AND (NOT $3::boolean OR ",
                     internal::kScheduledRun,
                     ")"
                     "  ORDER BY c.run_created_at DESC, c.job_id, ",
                     internal::kNewestAttempt,
                     " LIMIT $4) x "
                     "ORDER BY wanted.ord, x.run_created_at"));
  }

  void AttachJobs(pqxx::nontransaction& txn, const std::vector<std::string>& run_ids, std::vector<WebRun>& runs) {
    if (run_ids.empty()) return;
    for (const pqxx::row& row : txn.exec_prepared(kRunJobs, internal::UuidArray(run_ids))) {
      const std::string run_id = Text(row[0]);
      auto it = std::find_if(runs.begin(), runs.end(), [&](const WebRun& r) { return r.run_id == run_id; });
      if (it != runs.end()) it->jobs.push_back(JobFromRow(row));
    }
  }

  std::unique_ptr<ConnectionPool> pool_;
  const int online_window_seconds_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WebReader>> OpenPgWebReader(const WebReaderOptions& options) {
  if (options.uri.empty()) return absl::InvalidArgumentError("web reader: uri must not be empty");
  if (options.online_window_seconds < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("web reader: online_window_seconds >= 1, got ", options.online_window_seconds));
  }
  ConnectionOptions connection;
  connection.uri = options.uri;
  connection.pool_size = options.pool_size;
  connection.application_name = "fleetmark-web";
  connection.connect_at_create = options.connect_at_open;
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<ConnectionPool> pool, ConnectionPool::Create(connection));
  return std::unique_ptr<WebReader>(new PgWebReader(std::move(pool), options.online_window_seconds));
}

}  // namespace fleetmark::store
