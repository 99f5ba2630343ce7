// MemoryStore: schedules and their fires, results retention (emulated monthly
// partitions) and confirmed changes, with PgStore's semantics (store_schedules.cc,
// store_retention.cc, store_changes.cc).
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/store/agent_health.h"
#include "coordinator/store/memory_tables.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"

namespace fleetmark::store {

using memory::Agent;
using memory::Job;
using memory::Lower;
using memory::Result;
using memory::Run;

namespace {

// A run submitted by a schedule (internal::kScheduledRun).
bool Scheduled(const Run& run) { return absl::StartsWith(run.submitted_by, "schedule:"); }

}  // namespace

// --- schedules ---

absl::StatusOr<v1::Schedule> MemoryStore::CreateSchedule(const v1::Schedule& schedule, absl::Time next_fire) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckSchedule(schedule));
  MemoryTransaction txn(*db_);
  auto& schedules = txn.tables().schedules;
  if (schedules.count(schedule.name()) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("schedule \"", schedule.name(),
                                                 "\" already exists; to replace it, delete it first: "
                                                 "fleetmark schedules delete ",
                                                 schedule.name()));
  }
  v1::Schedule out = schedule;
  out.set_paused(false);
  out.set_created_unix_ns(absl::ToUnixNanos(txn.now()));
  out.set_next_fire_unix_ns(absl::ToUnixNanos(next_fire));
  out.clear_last_fire_slot_unix_ns();
  out.clear_last_fire_outcome();
  schedules[schedule.name()] = {txn.NewId(), out};
  return out;
}

absl::StatusOr<Store::SeedOutcome> MemoryStore::SeedDefaultSchedule(const v1::Schedule& schedule,
                                                                    absl::Time next_fire) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckSchedule(schedule));
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  const bool first_seed = t.seeded_defaults.insert(absl::StrCat("schedule:", schedule.name())).second;
  auto it = t.schedules.find(schedule.name());
  const bool exists = it != t.schedules.end();
  if (!exists && !first_seed) return SeedOutcome::kLeftDeleted;
  if (!exists) {
    v1::Schedule created = schedule;
    created.set_paused(false);
    created.set_created_unix_ns(absl::ToUnixNanos(txn.now()));
    created.clear_last_fire_slot_unix_ns();
    created.clear_last_fire_outcome();
    it = t.schedules.emplace(schedule.name(), memory::Schedule{txn.NewId(), created}).first;
  }
  v1::Schedule& s = it->second.schedule;
  s.set_cron(schedule.cron());
  *s.mutable_plan() = schedule.plan();
  s.set_selector(schedule.selector());
  s.set_quick(schedule.quick());
  s.set_filter(schedule.filter());
  s.set_next_fire_unix_ns(absl::ToUnixNanos(next_fire));
  return exists ? SeedOutcome::kUpdated : SeedOutcome::kCreated;
}

absl::StatusOr<std::vector<v1::Schedule>> MemoryStore::ListSchedules() {
  MemoryTransaction txn(*db_);
  std::vector<v1::Schedule> schedules;
  for (const auto& [name, stored] : txn.tables().schedules) {  // by name
    v1::Schedule& s = schedules.emplace_back(stored.schedule);
    s.clear_last_fire_slot_unix_ns();
    s.clear_last_fire_outcome();
    auto fires = txn.tables().fires.find(stored.schedule_id);
    if (fires == txn.tables().fires.end() || fires->second.empty()) continue;
    const auto& [slot, fire] = *fires->second.rbegin();
    s.set_last_fire_slot_unix_ns(absl::ToUnixNanos(slot));
    if (fire.run_id) {
      s.set_last_fire_outcome(absl::StrCat("run ", *fire.run_id));
    } else if (s.last_fire_slot_unix_ns() != 0) {
      s.set_last_fire_outcome(fire.note.empty() ? "no run" : fire.note);
    }
  }
  return schedules;
}

absl::Status MemoryStore::DeleteSchedule(const std::string& name) {
  MemoryTransaction txn(*db_);
  auto it = txn.tables().schedules.find(name);
  if (it == txn.tables().schedules.end()) return absl::NotFoundError(absl::StrCat("schedule \"", name, "\" not found"));
  txn.tables().fires.erase(it->second.schedule_id);
  txn.tables().schedules.erase(it);
  return absl::OkStatus();
}

absl::Status MemoryStore::SetScheduleNextFire(const std::string& name, absl::Time next_fire) {
  MemoryTransaction txn(*db_);
  auto it = txn.tables().schedules.find(name);
  if (it != txn.tables().schedules.end()) it->second.schedule.set_next_fire_unix_ns(absl::ToUnixNanos(next_fire));
  return absl::OkStatus();
}

absl::Status MemoryStore::SetSchedulePaused(const std::string& name, bool paused) {
  MemoryTransaction txn(*db_);
  auto it = txn.tables().schedules.find(name);
  if (it == txn.tables().schedules.end()) return absl::NotFoundError(absl::StrCat("schedule \"", name, "\" not found"));
  it->second.schedule.set_paused(paused);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<v1::RunInfo>> MemoryStore::FireSchedule(const std::string& schedule_name, absl::Time slot,
                                                                     const NewRun& run, const std::string& skipped) {
  if (!run.agent_ids.empty()) FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(run));
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  auto it = t.schedules.find(schedule_name);
  if (it == t.schedules.end()) return absl::NotFoundError(absl::StrCat("schedule \"", schedule_name, "\" not found"));
  // The slot as PostgreSQL stores it (µs).
  const absl::Time stored_slot = absl::FromUnixMicros(absl::ToUnixMicros(slot));
  auto& fires = t.fires[it->second.schedule_id];
  if (fires.count(stored_slot) > 0) return std::optional<v1::RunInfo>();
  FLEETMARK_RETURN_IF_ERROR(memory::CheckRunAgents(txn, run));
  memory::Fire& fire = fires[stored_slot];
  fire.coordinator_id = options_.coordinator_id;
  if (run.agent_ids.empty()) {
    fire.note = skipped.empty() ? std::string("skipped: no agent selected") : skipped;
    return std::optional<v1::RunInfo>(v1::RunInfo());
  }
  const memory::InsertedRun inserted = memory::InsertRun(txn, run, {}, absl::ZeroDuration(), "");
  fire.run_id = inserted.run_id;
  return std::optional<v1::RunInfo>(*memory::LoadRun(txn, inserted.run_id));
}

absl::StatusOr<std::optional<absl::Time>> MemoryStore::LastFiredSlot(const std::string& schedule_name) {
  MemoryTransaction txn(*db_);
  auto it = txn.tables().schedules.find(schedule_name);
  if (it == txn.tables().schedules.end()) return std::optional<absl::Time>();
  auto fires = txn.tables().fires.find(it->second.schedule_id);
  if (fires == txn.tables().fires.end() || fires->second.empty()) return std::optional<absl::Time>();
  return std::optional<absl::Time>(fires->second.rbegin()->first);
}

// --- results retention ---

absl::Status MemoryStore::RecordRunExported(const std::string& run_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  MemoryTransaction txn(*db_);
  auto it = txn.tables().runs.find(Lower(run_id));
  if (it == txn.tables().runs.end()) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  it->second.exported_at = txn.now();
  return absl::OkStatus();
}

absl::StatusOr<int> MemoryStore::EnsureResultPartitions(int months_ahead) {
  if (months_ahead < 0 || months_ahead > 120) {
    return absl::InvalidArgumentError(
        absl::StrCat("partitions_ahead: 0 <= partitions_ahead <= 120 months, got ", months_ahead));
  }
  MemoryTransaction txn(*db_);
  const int64_t first = memory::MonthOf(txn.now());
  int created = 0;
  for (int64_t month = first; month <= first + months_ahead; ++month) {
    created += txn.tables().partitions.insert(month).second ? 1 : 0;
  }
  return created;
}

absl::StatusOr<PruneOutcome> MemoryStore::PruneResults(const PruneOptions& options) {
  if (options.older_than <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("older_than: a duration > 0, got ", absl::FormatDuration(options.older_than)));
  }
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  PruneOutcome outcome;
  outcome.cutoff = txn.now() - options.older_than;
  std::set<int64_t> dropped;
  for (int64_t month : t.partitions) {  // ascending: oldest first
    if (memory::MonthStart(month + 1) > outcome.cutoff) continue;
    ResultPartition p;
    const absl::CivilMonth civil(month / 12, month % 12 + 1);
    p.name = absl::StrFormat("case_results_y%04dm%02d", civil.year(), civil.month());
    p.from = memory::MonthStart(month);
    p.to = memory::MonthStart(month + 1);
    for (const auto& [id, r] : t.results) p.estimated_rows += memory::MonthOf(r.run_created_at) == month ? 1 : 0;
    outcome.partitions.push_back(std::move(p));
    dropped.insert(month);
  }
  if (outcome.partitions.empty()) return outcome;
  std::vector<const Run*> runs;
  for (const auto& [id, run] : t.runs) {
    if (dropped.count(memory::MonthOf(run.created_at)) > 0) runs.push_back(&run);
  }
  std::sort(runs.begin(), runs.end(), [](const Run* a, const Run* b) {
    return std::tie(a->created_at, a->run_id) < std::tie(b->created_at, b->run_id);
  });
  std::set<std::string> with_results;
  for (const auto& [id, r] : t.results) with_results.insert(r.run_id);
  std::vector<std::string> unfinished, unexported;
  for (const Run* run : runs) {
    outcome.run_ids.push_back(run->run_id);
    if (run->status == "queued" || run->status == "running") unfinished.push_back(run->run_id);
    if (!run->exported_at && with_results.count(run->run_id) > 0) unexported.push_back(run->run_id);
  }
  auto named = [](const std::vector<std::string>& ids) {
    constexpr size_t kNamedRuns = 20;
    std::string text = absl::StrJoin(ids.begin(), ids.begin() + std::min(ids.size(), kNamedRuns), ", ");
    if (ids.size() > kNamedRuns) absl::StrAppend(&text, " and ", ids.size() - kNamedRuns, " more");
    return text;
  };
  if (!unfinished.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(unfinished.size(), " runs in the partitions to drop are still queued or running (cancel them ",
                     "or wait, then prune again): ", named(unfinished)));
  }
  if (!unexported.empty() && !options.force) {
    return absl::FailedPreconditionError(
        absl::StrCat(unexported.size(), " runs in the partitions to drop were never exported (fleetmark export ",
                     "RUN records an export; --force prunes them anyway): ", named(unexported)));
  }
  if (options.dry_run) return outcome;
  const std::set<std::string> gone(outcome.run_ids.begin(), outcome.run_ids.end());
  for (auto it = t.results.begin(); it != t.results.end();) {
    const bool drop =
        dropped.count(memory::MonthOf(it->second.run_created_at)) > 0 || gone.count(it->second.run_id) > 0;
    it = drop ? t.results.erase(it) : std::next(it);
  }
  for (auto it = t.jobs.begin(); it != t.jobs.end();)
    it = gone.count(it->second.run_id) > 0 ? t.jobs.erase(it) : std::next(it);
  for (const std::string& id : gone) t.runs.erase(id);
  for (auto& [schedule, fires] : t.fires) {
    for (auto& [slot, fire] : fires) {
      if (fire.run_id && gone.count(*fire.run_id) > 0) fire.run_id.reset();
    }
  }
  for (int64_t month : dropped) t.partitions.erase(month);
  return outcome;
}

// --- confirmed changes ---

namespace {

// Nightly runs older than this are not scanned; points per case series (store_changes.cc).
constexpr absl::Duration kScanWindow = absl::Hours(24 * 7);
constexpr size_t kSeriesPoints = 120;

ChangeRecord ReadChange(MemoryTransaction& txn, const memory::Change& change) {
  ChangeRecord c = change.record;
  auto agent = txn.tables().agents.find(c.agent_id);
  c.agent_name = agent != txn.tables().agents.end() ? agent->second.name : "";
  return c;
}

ChangeScan LoadScan(MemoryTransaction& txn, const std::string& run_id, const std::string& agent_id) {
  auto& t = txn.tables();
  ChangeScan scan;
  scan.run_id = run_id;
  scan.agent_id = agent_id;
  if (auto agent = t.agents.find(agent_id); agent != t.agents.end()) {
    scan.agent_name = agent->second.name;
    if (agent->second.noise_percent) scan.noise = *agent->second.noise_percent / 100;
  }
  const Run& scanned = t.runs.at(run_id);
  std::set<std::string> cases;
  for (const auto& [id, r] : t.results) {
    if (r.run_id == run_id && r.agent_id == agent_id && r.status != "cancelled" &&
        !IsCalibrationLabel(r.strategy_label)) {
      cases.insert(r.case_id);
    }
  }
  // Each (job, case)'s newest attempt among the agent's scheduled runs up to this one.
  std::map<std::pair<std::string, std::string>, const Result*> newest;
  for (const auto& [id, r] : t.results) {
    if (r.agent_id != agent_id || cases.count(r.case_id) == 0) continue;
    const Run& run = t.runs.at(r.run_id);
    if (!Scheduled(run) || run.created_at > scanned.created_at) continue;
    const Result*& kept = newest[{r.job_id, r.case_id}];
    if (kept == nullptr || memory::NewerAttempt(r, *kept)) kept = &r;
  }
  std::map<std::string, std::vector<const Result*>> by_case;
  for (const auto& [key, r] : newest) by_case[r->case_id].push_back(r);
  for (auto& [case_id, points] : by_case) {
    std::sort(points.begin(), points.end(), [&](const Result* a, const Result* b) {
      const Run& x = t.runs.at(a->run_id);
      const Run& y = t.runs.at(b->run_id);
      return std::tie(x.created_at, x.seq, x.run_id) < std::tie(y.created_at, y.seq, y.run_id);
    });
    if (points.size() > kSeriesPoints) points.erase(points.begin(), points.end() - kSeriesPoints);
    CaseSeries& s = scan.series.emplace_back();
    s.case_id = case_id;
    for (const Result* r : points) {
      s.medians_ns.push_back(r->status == "ok" ? r->median_ns : 0.0);
      s.fingerprint_hashes.push_back(r->fingerprint_hash.value_or(""));
      s.newest_result_id = r->result_id;
    }
  }
  return scan;
}

}  // namespace

absl::StatusOr<std::vector<SuspectedChanges>> MemoryStore::ScanNightlyRuns(const ChangeDetector& detect,
                                                                           int max_scans) {
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  struct Pending {
    const Run* run;
    std::string agent_id;
  };
  std::vector<Pending> pending;
  for (const auto& [id, job] : t.jobs) {
    const Run& run = t.runs.at(job.run_id);
    if (!Scheduled(run) || (run.status != "done" && run.status != "failed")) continue;
    if (job.status != kJobDone && job.status != kJobFailed) continue;
    if (!run.finished_at || !(*run.finished_at > txn.now() - kScanWindow)) continue;
    if (t.change_scans.count({job.run_id, job.agent_id}) > 0) continue;
    pending.push_back({&run, job.agent_id});
  }
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.run->created_at, a.run->seq, a.agent_id) < std::tie(b.run->created_at, b.run->seq, b.agent_id);
  });
  if (pending.size() > static_cast<size_t>(std::max(0, max_scans))) pending.resize(std::max(0, max_scans));
  std::vector<SuspectedChanges> found;
  for (const Pending& p : pending) {
    const std::string run_id = p.run->run_id;
    if (!t.change_scans.insert({run_id, p.agent_id}).second) continue;
    const ChangeScan scan = LoadScan(txn, run_id, p.agent_id);
    SuspectedChanges out{run_id, p.agent_id, scan.agent_name, {}, {}};
    for (const DetectedChange& d : detect(scan)) {
      std::string result_id;
      for (const CaseSeries& s : scan.series) {
        if (s.case_id == d.case_id) result_id = s.newest_result_id;
      }
      memory::Change& change = t.changes[t.next_change_id];
      ChangeRecord& c = change.record;
      c.change_id = t.next_change_id++;
      c.agent_id = p.agent_id;
      c.case_id = d.case_id;
      c.run_id = run_id;
      c.result_id = result_id;
      c.old_level_ns = d.old_level_ns;
      c.new_level_ns = d.new_level_ns;
      if (scan.noise > 0) c.noise_percent = 100 * scan.noise;
      c.min_change_percent = 100 * d.min_relative_change;
      c.state = "suspected";
      c.created_at = txn.now();
      out.change_ids.push_back(c.change_id);
      out.case_ids.push_back(d.case_id);
    }
    if (!out.change_ids.empty()) found.push_back(std::move(out));
  }
  return found;
}

absl::StatusOr<std::string> MemoryStore::SubmitConfirmation(const SuspectedChanges& found, int budget_per_day,
                                                            const ConfirmationBuilder& build, v1::RunInfo* run) {
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  auto unconfirmed = [&](const std::string& reason) -> absl::StatusOr<std::string> {
    for (int64_t id : found.change_ids) {
      auto it = t.changes.find(id);
      if (it == t.changes.end() || it->second.record.state != "suspected") continue;
      it->second.record.state = "unconfirmed";
      it->second.record.reason = reason.substr(0, 4096);
      it->second.record.decided_at = txn.now();
    }
    return reason;
  };
  auto agent = t.agents.find(Lower(found.agent_id));
  if (agent == t.agents.end()) return unconfirmed("agent not found");
  const Agent& a = agent->second;
  if (a.removed_at) return unconfirmed(absl::StrCat("agent ", a.name, " was removed"));
  if (a.health == kHealthQuarantined) {
    return unconfirmed(absl::StrCat("agent ", a.name, " is quarantined (", a.quarantine_reason, ")"));
  }
  if (!memory::Online(a, txn.now(), options_.online_window))
    return unconfirmed(absl::StrCat("agent ", a.name, " is offline"));
  std::set<std::string> used;
  for (const auto& [id, change] : t.changes) {
    const ChangeRecord& c = change.record;
    if (c.agent_id != a.agent_id || c.confirmation_run_id.empty()) continue;
    auto r = t.runs.find(c.confirmation_run_id);
    if (r != t.runs.end() && r->second.created_at > txn.now() - absl::Hours(24)) used.insert(c.confirmation_run_id);
  }
  if (static_cast<int64_t>(used.size()) >= budget_per_day) {
    return unconfirmed(absl::StrCat("over the confirmation budget (", budget_per_day, " per agent per day)"));
  }
  auto nightly = t.runs.find(Lower(found.run_id));
  if (nightly == t.runs.end()) return unconfirmed("the nightly run is gone");
  absl::StatusOr<NewRun> built = build(nightly->second.plan, nightly->second.quick);
  if (!built.ok()) return unconfirmed(std::string(built.status().message()));
  FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(*built));
  FLEETMARK_RETURN_IF_ERROR(memory::CheckRunAgents(txn, *built));
  const memory::InsertedRun inserted = memory::InsertRun(txn, *built, {}, absl::ZeroDuration(), "");
  *run = *memory::LoadRun(txn, inserted.run_id);
  for (int64_t id : found.change_ids) {
    auto it = t.changes.find(id);
    if (it != t.changes.end()) it->second.record.confirmation_run_id = inserted.run_id;
  }
  return std::string();
}

absl::StatusOr<std::vector<EndedConfirmation>> MemoryStore::EndedConfirmations(int limit) {
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::vector<EndedConfirmation> out;
  for (const auto& [id, change] : t.changes) {  // by change id
    if (static_cast<int>(out.size()) >= limit) break;
    const ChangeRecord& c = change.record;
    if (c.state != "suspected" || c.confirmation_run_id.empty()) continue;
    auto run = t.runs.find(c.confirmation_run_id);
    if (run == t.runs.end()) continue;
    const std::string& status = run->second.status;
    if (status != "done" && status != "failed" && status != "cancelled") continue;
    EndedConfirmation& e = out.emplace_back();
    e.change = ReadChange(txn, change);
    e.run_status = status;
    for (const auto& [job_id, job] : t.jobs) {
      if (job.run_id == c.confirmation_run_id && job.agent_id == c.agent_id) {
        e.job_status = job.status;
        e.job_message = job.message;
      }
    }
    const Result* newest = nullptr;
    for (const auto& [rid, r] : t.results) {
      if (r.run_id != c.confirmation_run_id || r.agent_id != c.agent_id || r.case_id != c.case_id || r.status != "ok") {
        continue;
      }
      if (newest == nullptr || memory::NewerAttempt(r, *newest)) newest = &r;
    }
    if (newest != nullptr) e.median_ns = newest->median_ns;
  }
  return out;
}

absl::StatusOr<std::optional<ChangeRecord>> MemoryStore::DecideChange(int64_t change_id, const std::string& state,
                                                                      const std::string& reason,
                                                                      std::optional<double> median_ns) {
  MemoryTransaction txn(*db_);
  auto it = txn.tables().changes.find(change_id);
  if (it == txn.tables().changes.end() || it->second.record.state != "suspected") return std::optional<ChangeRecord>();
  ChangeRecord& c = it->second.record;
  c.state = state;
  c.reason = reason.substr(0, 4096);
  c.confirmation_median_ns = median_ns;
  c.decided_at = txn.now();
  return std::optional<ChangeRecord>(ReadChange(txn, it->second));
}

absl::StatusOr<std::vector<ChangeRecord>> MemoryStore::ListChanges(const ChangeFilter& filter) {
  if (filter.limit < 1 || filter.limit > 10000) {
    return absl::InvalidArgumentError(absl::StrCat("limit: 1 <= limit <= 10000, got ", filter.limit));
  }
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  if (!filter.agent_name.empty() && std::none_of(t.agents.begin(), t.agents.end(), [&](const auto& entry) {
        return entry.second.name == filter.agent_name;
      })) {
    return absl::NotFoundError(absl::StrCat("agent: no agent named \"", EscapeForTerminal(filter.agent_name, 80),
                                            "\" (fleetmark agents list --all lists every agent)"));
  }
  std::vector<ChangeRecord> out;
  for (auto it = t.changes.rbegin(); it != t.changes.rend(); ++it) {
    ChangeRecord c = ReadChange(txn, it->second);
    if (c.created_at < filter.since) continue;
    if (!filter.agent_name.empty() && c.agent_name != filter.agent_name) continue;
    if (!filter.state.empty() && c.state != filter.state) continue;
    out.push_back(std::move(c));
  }
  // Newest first: created_at DESC, change_id DESC.
  std::stable_sort(out.begin(), out.end(),
                   [](const ChangeRecord& a, const ChangeRecord& b) { return a.created_at > b.created_at; });
  if (out.size() > static_cast<size_t>(filter.limit)) out.resize(filter.limit);
  return out;
}

}  // namespace fleetmark::store
