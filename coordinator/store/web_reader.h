// Read-only queries behind the web view and its JSON API (/api/v1/...): agents, runs,
// run results, raw samples, case history. The interface has no PostgreSQL types, so
// coordinator/http depends only on this header; PgWebReader (web_queries.cc) implements
// it over libpqxx with parameterised SQL.
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<WebReader> reader,
//                              OpenPgWebReader({.uri = uri, .pool_size = 8}));
//   absl::StatusOr<WebRun> run = reader->GetRun("0b6f...");   // NotFound if absent
//
// Thread-safety: implementations are safe to call from many threads at once.
// Errors: NotFound for a missing or malformed id, InvalidArgument for a bad argument
// (the message names it), Unavailable when the database cannot be reached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store/change_records.h"
#include "fleetmark/v1/host.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::store {

// One agent (device) as the fleet page shows it.
struct WebAgent {
  std::string agent_id;
  std::string name;
  std::string state;  // online | offline | removed (`agents remove`) | imported (`results import`'s device record)
  fleetmark::v1::HostInfo host;               // as sent in the agent's hello
  std::map<std::string, std::string> labels;  // agent-provided; untrusted text
  int64_t last_seen_unix_ns = 0;              // 0 = never
  std::string running_job_id;                 // "" = idle
  // Fleet health (store/agent_health.h): "ok" | "quarantined", why, since (0 = not).
  std::string health = "ok";
  std::string quarantine_reason;
  int64_t quarantined_unix_ns = 0;
  double noise_percent = -1;  // the noise score, percent; < 0 = unknown
  int noise_nights = 0;
  // Its hello's host identity (coordinator/scheduler/same_host.h; "" = unknown) and the
  // names of the other agents (not removed) on its host.
  std::string machine_id;
  std::string boot_id;
  bool exclusive_cpus = false;
  std::vector<std::string> same_host_as;
};

// One job of a run: the run's share on one agent.
struct WebJob {
  std::string job_id;
  std::string agent_id;
  std::string agent_name;
  std::string status;  // queued | assigned | running | done | failed | cancelled
  std::string message;
  uint32_t attempts = 0;
  uint32_t cases_done = 0;
  uint32_t cases_total = 0;
};

struct WebRun {
  std::string run_id;
  std::string plan_name;
  std::string status;  // queued | running | done | failed | cancelled
  std::string selector;
  std::string submitted_by;  // "cli:<user>" or "schedule:<name>"
  bool quick = false;
  int64_t created_unix_ns = 0;
  int64_t finished_unix_ns = 0;  // 0 = not finished
  uint64_t results = 0;          // cases with a real result (not cancelled), as RunInfo.results
  bool imported = false;         // stored by `fleetmark results import` (RunInfo.imported)
  std::vector<WebJob> jobs;
};

// A stored case result with the agent that produced it. In lists (RunResults) only
// the dimensions, status, statistics, stored counters and the scenario result are
// filled (no samples, environment or context switches); GetResult fills everything.
struct WebResult {
  std::string agent_id;
  std::string agent_name;
  fleetmark::v1::CaseResult result;
};

// One schedule (`fleetmark schedules create`), as `schedules list` shows it.
struct WebSchedule {
  std::string name;
  std::string cron;  // 5 fields, UTC
  std::string plan_name;
  std::string selector;  // "" = every online agent
  bool quick = false;
  std::string filter;                  // RE2 on case ids applied to every run it fires; "" = every case
  bool paused = false;                 // `schedules pause`: fires nothing until resumed
  int64_t next_fire_unix_ns = 0;       // 0 = not computed yet
  int64_t last_fire_slot_unix_ns = 0;  // 0 = never fired
  std::string last_fire_outcome;       // "run <id>", or why the slot made no run ("skipped: paused")
  std::string last_fire_run_id;        // the run the last fire made; "" = none
};

// One point of a case's history: the case's median in one run on one agent.
struct HistoryPoint {
  std::string agent_id;
  std::string agent_name;
  std::string run_id;
  std::string result_id;
  int64_t run_created_unix_ns = 0;  // when the run was submitted (the night it ran)
  double median_ns = 0;
  double ci_low_ns = 0;
  double ci_high_ns = 0;
  fleetmark::v1::CaseStatus status = fleetmark::v1::CASE_STATUS_UNSPECIFIED;
  bool emulated = false;  // measured under an emulator (e.g. qemu-user): not the device's speed
  // The device fingerprint the point was measured under (hash "" = unknown: an older
  // agent's result).
  fleetmark::v1::DeviceFingerprint fingerprint;
};

class WebReader {
 public:
  virtual ~WebReader() = default;

  // Every known agent, ordered by name.
  virtual absl::StatusOr<std::vector<WebAgent>> ListAgents() = 0;

  // The newest `limit` runs (1..1000), newest first, each with its jobs.
  virtual absl::StatusOr<std::vector<WebRun>> ListRuns(int limit) = 0;

  // The full run id `id_or_prefix` names, as Store::ResolveRunId (and the CLI) accept
  // it: a UUID (a job's id gives its run), or a prefix with at least 6 hex digits
  // matching exactly one run.
  // InvalidArgument for a malformed or ambiguous prefix, NotFound if none matches.
  virtual absl::StatusOr<std::string> ResolveRunId(std::string_view id_or_prefix) = 0;

  // The ids of the runs `id_or_prefix` names (ResolveRunId's rule and errors for a
  // malformed prefix), in id order, at most `limit` (1..100); empty when none matches.
  // More than one: the prefix is ambiguous, and these are the candidates.
  virtual absl::StatusOr<std::vector<std::string>> RunIdsWithPrefix(std::string_view id_or_prefix, int limit) = 0;

  // One run with its jobs; NotFound if `run_id` is unknown or not a UUID.
  virtual absl::StatusOr<WebRun> GetRun(std::string_view run_id) = 0;

  // The run's case results (without samples), optionally only those of one agent
  // (`agent_id` "" = all). NotFound if the run is unknown.
  virtual absl::StatusOr<std::vector<WebResult>> RunResults(std::string_view run_id, std::string_view agent_id) = 0;

  // One result in full (raw samples, counters, environment); NotFound if unknown or
  // not a UUID.
  virtual absl::StatusOr<WebResult> GetResult(std::string_view result_id) = 0;

  // The newest run holding results of `agent_id`; NotFound if the agent is unknown or
  // has no results.
  virtual absl::StatusOr<std::string> LatestRunWithResults(std::string_view agent_id) = 0;

  // Every case id with a stored result of any of `agent_ids` in any run (sorted,
  // distinct): the cases that have a history for those devices. NotFound if an id is not
  // a UUID; an unknown agent adds none.
  virtual absl::StatusOr<std::vector<std::string>> CaseIds(const std::vector<std::string>& agent_ids) = 0;

  // Every schedule, ordered by name, with its filter, paused state and latest fire.
  virtual absl::StatusOr<std::vector<WebSchedule>> ListSchedules() = 0;

  // The median of `case_id` in each of the newest `limit` (1..1000) runs per agent,
  // grouped by agent (in `agent_ids` order), oldest first; `scheduled_only` keeps runs
  // submitted by a schedule (nightly). Unknown agents give no points.
  virtual absl::StatusOr<std::vector<HistoryPoint>> CaseHistory(std::string_view case_id,
                                                                const std::vector<std::string>& agent_ids, int limit,
                                                                bool scheduled_only) = 0;

  // Confirmed changes (change_records.h) as Store::ListChanges selects them: newest
  // first. InvalidArgument naming `limit` out of 1..10000.
  virtual absl::StatusOr<std::vector<ChangeRecord>> ListChanges(const ChangeFilter& filter) = 0;
};

struct WebReaderOptions {
  std::string uri;    // libpq URI of the coordinator's database
  int pool_size = 8;  // connections opened at most (1..256)
  // An agent shows as online while its state is online and it was seen this recently
  // (the coordinator's StoreOptions::online_window).
  int online_window_seconds = 30;
  // false: connect on the first read, not at open (a read replica that may be down at
  // start; its reads then fail with Unavailable until it answers).
  bool connect_at_open = true;
};

// The PostgreSQL-backed reader. Errors: InvalidArgument (empty URI, pool size out of
// range), Unavailable (database unreachable).
absl::StatusOr<std::unique_ptr<WebReader>> OpenPgWebReader(const WebReaderOptions& options);

}  // namespace fleetmark::store
