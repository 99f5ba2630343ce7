// MemoryStore: the database and its transactions, the shared helpers of memory_tables.h,
// migrations, fleet counts, enrollment tokens and agents. Runs, jobs and results live in
// memory_jobs.cc; schedules, retention and changes in memory_schedules.cc.
#include <algorithm>
#include <map>
#include <set>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/scheduler/same_host.h"
#include "coordinator/store/agent_health.h"
#include "coordinator/store/memory_tables.h"
#include "coordinator/store/store_internal.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"

namespace fleetmark::store {

using memory::Agent;
using memory::Job;
using memory::Result;
using memory::Run;

// --- the database and its transactions ---

MemoryDatabase::MemoryDatabase(const Clock& clock) : clock_(clock), tables_(std::make_unique<memory::Tables>()) {}
MemoryDatabase::~MemoryDatabase() = default;

void MemoryDatabase::Subscribe(std::function<void(const Notification&)> subscriber) {
  absl::MutexLock lock(&mu_);
  subscriber_ = std::move(subscriber);
}

int MemoryDatabase::AddSubscriber(std::function<void(const Notification&)> subscriber) {
  absl::MutexLock lock(&mu_);
  const int key = next_subscriber_key_++;
  added_subscribers_.emplace(key, std::move(subscriber));
  return key;
}

void MemoryDatabase::RemoveSubscriber(int key) {
  {
    absl::MutexLock lock(&mu_);
    added_subscribers_.erase(key);
  }
  // A transaction that copied the subscribers before the erase took deliver_mu_ before
  // letting mu_ go: waiting for deliver_mu_ waits for its deliveries to end.
  absl::MutexLock deliver(&deliver_mu_);
}

void MemoryDatabase::SetIdSource(std::function<std::string()> next_id) {
  absl::MutexLock lock(&mu_);
  next_id_ = std::move(next_id);
}

MemoryTransaction::MemoryTransaction(MemoryDatabase& db) : db_(db) {
  db_.mu_.Lock();
  now_ = absl::FromUnixMicros(absl::ToUnixMicros(db_.clock_.Now()));
  seq_ = ++db_.tables_->seq;
}

MemoryTransaction::~MemoryTransaction() {
  std::vector<std::function<void(const Notification&)>> subscribers;
  if (!pending_.empty()) {
    if (db_.subscriber_) subscribers.push_back(db_.subscriber_);
    for (const auto& [key, added] : db_.added_subscribers_) subscribers.push_back(added);
  }
  // Deliveries in commit order: the delivery lock is taken before the data lock is let go.
  absl::MutexLock deliver(&db_.deliver_mu_);
  db_.mu_.Unlock();
  for (const auto& subscriber : subscribers) {
    for (const Notification& n : pending_) subscriber(n);
  }
}

std::string MemoryTransaction::NewId() { return db_.next_id_ ? db_.next_id_() : MemoryDatabase::RandomId(); }

std::string MemoryDatabase::RandomId() {
  static absl::Mutex bits_mu(absl::kConstInit);
  static absl::BitGen* bits = new absl::BitGen();
  absl::MutexLock lock(&bits_mu);
  const uint64_t hi = absl::Uniform<uint64_t>(*bits), lo = absl::Uniform<uint64_t>(*bits);
  // Version 4, variant 10 (RFC 4122).
  return absl::StrFormat("%08x-%04x-4%03x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff,
                         0x8000 | ((lo >> 48) & 0x3fff), lo & 0xffffffffffffULL);
}

void MemoryTransaction::Notify(Notification n) {
  if (!n.agent_ids.empty()) pending_.push_back(std::move(n));
}

// --- helpers (memory_tables.h) ---

namespace memory {

std::string Lower(const std::string& id) { return absl::AsciiStrToLower(id); }

absl::Status CheckRunAgents(MemoryTransaction& txn, const NewRun& run) {
  for (const std::string& id : run.agent_ids) {
    if (txn.tables().agents.count(Lower(id)) == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("create run: job of agent ", Lower(id), ", which does not exist"));
    }
  }
  return absl::OkStatus();
}

bool Online(const Agent& agent, absl::Time now, absl::Duration window) {
  return agent.state == "online" && agent.last_seen > now - window;
}

bool NewerAttempt(const Result& a, const Result& b) {
  // finished_at DESC NULLS LAST, received_at DESC, result_id DESC.
  if (a.finished_at.has_value() != b.finished_at.has_value()) return a.finished_at.has_value();
  if (a.finished_at && *a.finished_at != *b.finished_at) return *a.finished_at > *b.finished_at;
  if (a.received_at != b.received_at) return a.received_at > b.received_at;
  if (a.seq != b.seq) return a.seq > b.seq;
  return a.result_id > b.result_id;
}

std::set<std::string> StoredCases(MemoryTransaction& txn, const Job& job, bool count_cancelled) {
  std::set<std::string> cases;
  for (const auto& [id, r] : txn.tables().results) {
    if (r.job_id == job.job_id && r.agent_id == job.agent_id && r.run_id == job.run_id &&
        (count_cancelled || r.status != "cancelled")) {
      cases.insert(r.case_id);
    }
  }
  return cases;
}

uint64_t ResultCount(MemoryTransaction& txn, const std::string& run_id) {
  std::map<std::pair<std::string, std::string>, const Result*> newest;
  for (const auto& [id, r] : txn.tables().results) {
    if (r.run_id != run_id) continue;
    const Result*& kept = newest[{r.job_id, r.case_id}];
    if (kept == nullptr || NewerAttempt(r, *kept)) kept = &r;
  }
  uint64_t count = 0;
  for (const auto& [key, r] : newest) count += r->status != "cancelled" ? 1 : 0;
  return count;
}

void RefreshRun(MemoryTransaction& txn, const std::string& run_id) {
  auto it = txn.tables().runs.find(run_id);
  if (it == txn.tables().runs.end()) return;
  Run& run = it->second;
  int active = 0, started = 0, failed = 0, cancelled = 0;
  for (const auto& [id, job] : txn.tables().jobs) {
    if (job.run_id != run_id) continue;
    if (job.status == kJobQueued || job.status == kJobAssigned || job.status == kJobRunning) ++active;
    if (job.status != kJobQueued || job.attempts > 0) ++started;
    if (job.status == kJobFailed) ++failed;
    if (job.status == kJobCancelled) ++cancelled;
  }
  const std::string status = active > 0      ? (started > 0 ? "running" : "queued")
                             : failed > 0    ? "failed"
                             : cancelled > 0 ? "cancelled"
                                             : "done";
  if (run.status == "cancelled" || run.status == status) return;
  run.status = status;
  if (status == "done" || status == "failed" || status == "cancelled") {
    if (!run.finished_at) run.finished_at = txn.now();
  } else {
    run.finished_at.reset();
  }
}

std::optional<v1::RunInfo> LoadRun(MemoryTransaction& txn, const std::string& run_id) {
  auto it = txn.tables().runs.find(run_id);
  if (it == txn.tables().runs.end()) return std::nullopt;
  const Run& run = it->second;
  v1::RunInfo info;
  info.set_run_id(run.run_id);
  info.set_plan_name(run.plan.name());
  info.set_status(run.status);
  info.set_selector(run.selector);
  info.set_submitted_by(run.submitted_by);
  info.set_quick(run.quick);
  info.set_created_unix_ns(absl::ToUnixNanos(run.created_at));
  info.set_finished_unix_ns(run.finished_at ? absl::ToUnixNanos(*run.finished_at) : 0);
  info.set_results(ResultCount(txn, run_id));
  info.set_imported(run.imported);
  // Ordered by agent name, then job creation (kJobsOrder).
  std::vector<const Job*> jobs;
  for (const auto& [id, job] : txn.tables().jobs) {
    if (job.run_id == run_id) jobs.push_back(&job);
  }
  auto name_of = [&](const Job* j) -> const std::string& { return txn.tables().agents.at(j->agent_id).name; };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const Job* a, const Job* b) {
    if (name_of(a) != name_of(b)) return name_of(a) < name_of(b);
    if (a->created_at != b->created_at) return a->created_at < b->created_at;
    return a->seq < b->seq;
  });
  for (const Job* j : jobs) {
    v1::JobInfo* job = info.add_jobs();
    job->set_job_id(j->job_id);
    job->set_agent_name(name_of(j));
    job->set_status(j->status);
    job->set_message(j->message);
    job->set_attempts(j->attempts);
    job->set_cases_done(j->cases_done);
    job->set_cases_total(j->cases_total);
  }
  return info;
}

std::vector<std::string> AgentsFreeToStart(MemoryTransaction& txn, const std::vector<std::string>& agent_ids,
                                           bool only_with_queued_job) {
  struct Hosted {
    std::string agent_id;
    scheduler::HostIdentity identity;
  };
  auto& t = txn.tables();
  std::map<std::string, Hosted> hosted;
  std::set<std::string> machines;
  for (const std::string& id : agent_ids) {
    auto it = t.agents.find(id);
    if (it == t.agents.end() || it->second.machine_id.empty() || it->second.boot_id.empty()) continue;
    const Agent& a = it->second;
    hosted[id] = {id, {a.machine_id, a.boot_id, a.exclusive_cpus}};
    machines.insert(a.machine_id);
  }
  if (hosted.empty()) return agent_ids;
  std::set<std::string> active_agents;
  for (const auto& [id, job] : t.jobs) {
    if (job.status == kJobAssigned || job.status == kJobRunning) active_agents.insert(job.agent_id);
  }
  std::vector<Hosted> busy;
  for (const auto& [id, a] : t.agents) {
    if (machines.count(a.machine_id) > 0 && !a.removed_at && active_agents.count(id) > 0) {
      busy.push_back({id, {a.machine_id, a.boot_id, a.exclusive_cpus}});
    }
  }
  std::set<std::string> with_work;
  if (only_with_queued_job) {
    for (const auto& [id, job] : t.jobs) {
      if (job.status == kJobQueued && hosted.count(job.agent_id) > 0) with_work.insert(job.agent_id);
    }
  }
  std::vector<std::string> free;
  for (const std::string& id : agent_ids) {
    auto found = hosted.find(id);
    if (found == hosted.end()) {
      free.push_back(id);
      continue;
    }
    const bool blocked = std::any_of(busy.begin(), busy.end(), [&](const Hosted& other) {
      return other.agent_id != id && scheduler::TakeTurns(found->second.identity, other.identity);
    });
    if (blocked) continue;
    free.push_back(id);
    if (!only_with_queued_job || with_work.count(id) > 0) busy.push_back(found->second);
  }
  return free;
}

int64_t MonthOf(absl::Time t) {
  const absl::CivilMonth m = absl::ToCivilMonth(t, absl::UTCTimeZone());
  return m.year() * 12 + (m.month() - 1);
}

absl::Time MonthStart(int64_t month) {
  return absl::FromCivil(absl::CivilMonth(month / 12, month % 12 + 1), absl::UTCTimeZone());
}

namespace {

// The agent's newest `limit` calibration nights (store_health.cc LoadCalibrationNights).
std::vector<CalibrationNight> LoadCalibrationNights(MemoryTransaction& txn, const Agent& agent, int limit) {
  auto& t = txn.tables();
  // Runs created after the release: a later time, or the same time and a later call.
  const auto since = std::make_pair(agent.released_at.value_or(absl::InfinitePast()), agent.released_seq);
  auto after_release = [&](const Run& run) { return std::make_pair(run.created_at, run.seq) > since; };
  auto calibration = [&](const Result& c) {
    return c.agent_id == agent.agent_id && IsCalibrationLabel(c.strategy_label) && c.status == "ok" && c.median_ns > 0;
  };
  // The fingerprint of its newest calibration result since the release.
  const Result* current = nullptr;
  for (const auto& [id, c] : t.results) {
    if (!calibration(c)) continue;
    const Run& run = t.runs.at(c.run_id);
    if (!after_release(run)) continue;
    if (current == nullptr) {
      current = &c;
      continue;
    }
    const Run& cur_run = t.runs.at(current->run_id);
    if (std::make_pair(run.created_at, run.seq) != std::make_pair(cur_run.created_at, cur_run.seq)
            ? std::make_pair(run.created_at, run.seq) > std::make_pair(cur_run.created_at, cur_run.seq)
            : std::make_pair(c.received_at, c.seq) > std::make_pair(current->received_at, current->seq)) {
      current = &c;
    }
  }
  const std::optional<std::string> hash = current != nullptr ? current->fingerprint_hash : std::nullopt;
  std::set<std::string> agent_runs;
  for (const auto& [id, job] : t.jobs) {
    if (job.agent_id == agent.agent_id) agent_runs.insert(job.run_id);
  }
  // Nights: runs of its jobs since the release with a calibration result, newest first.
  std::map<std::string, std::map<std::string, const Result*>> by_run;  // run -> case -> newest
  for (const auto& [id, c] : t.results) {
    if (!calibration(c) || c.fingerprint_hash != hash || agent_runs.count(c.run_id) == 0) continue;
    if (!after_release(t.runs.at(c.run_id))) continue;
    const Result*& kept = by_run[c.run_id][c.case_id];
    if (kept == nullptr || NewerAttempt(c, *kept)) kept = &c;
  }
  std::vector<const Run*> nights;
  for (const auto& [run_id, cases] : by_run) nights.push_back(&t.runs.at(run_id));
  std::sort(nights.begin(), nights.end(), [](const Run* a, const Run* b) {
    return std::tie(a->created_at, a->seq, a->run_id) > std::tie(b->created_at, b->seq, b->run_id);
  });
  if (static_cast<int>(nights.size()) > limit) nights.resize(std::max(0, limit));
  std::reverse(nights.begin(), nights.end());  // oldest first
  std::vector<CalibrationNight> out;
  for (const Run* run : nights) {
    CalibrationNight& night = out.emplace_back();
    night.run_id = run->run_id;
    for (const auto& [case_id, r] : by_run[run->run_id]) night.median_ns[case_id] = r->median_ns;
  }
  return out;
}

}  // namespace

void UpdateAgentsHealth(MemoryTransaction& txn, const std::vector<EndedJob>& ended, const HealthOptions& options) {
  auto& t = txn.tables();
  for (const EndedJob& e : ended) {
    if (e.outcome->cancelled) continue;  // a cancel says nothing about the device
    auto it = t.agents.find(e.agent_id);
    if (it == t.agents.end()) continue;
    Agent& agent = it->second;
    std::string reason;
    if (e.outcome->deferred) {
      ++agent.deferred_in_a_row;
      reason = DeferredQuarantineReason(agent.deferred_in_a_row, options, e.outcome->message);
    } else {
      agent.deferred_in_a_row = 0;
      const bool calibrated = std::any_of(t.results.begin(), t.results.end(), [&](const auto& entry) {
        const Result& c = entry.second;
        return c.run_id == e.run_id && c.agent_id == e.agent_id && c.job_id == e.job_id &&
               IsCalibrationLabel(c.strategy_label);
      });
      if (calibrated) {
        const HealthVerdict verdict =
            EvaluateCalibration(LoadCalibrationNights(txn, agent, options.noise_nights), options);
        agent.noise_percent = verdict.noise ? std::optional<double>(100 * *verdict.noise) : std::nullopt;
        agent.noise_nights = verdict.nights;
        reason = verdict.quarantine_reason;
      }
    }
    if (reason.empty() || agent.health == kHealthQuarantined) continue;
    agent.health = kHealthQuarantined;
    agent.quarantine_reason = StorableText(reason, 4096);
    agent.quarantined_at = txn.now();
  }
}

}  // namespace memory

// --- the store ---

MemoryStore::MemoryStore(StoreOptions options, std::shared_ptr<MemoryDatabase> database)
    : options_(std::move(options)), db_(std::move(database)) {}

MemoryStore::MemoryStore(StoreOptions options, const Clock& clock)
    : MemoryStore(std::move(options), std::make_shared<MemoryDatabase>(clock)) {}

MemoryStore::~MemoryStore() = default;

absl::Status MemoryStore::Migrate() {
  // What migration 0014 makes: the result partitions of this month and the next.
  MemoryTransaction txn(*db_);
  const int64_t month = memory::MonthOf(txn.now());
  txn.tables().partitions.insert({month, month + 1});
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> MemoryStore::AppliedMigrations() { return EmbeddedMigrationVersions(); }

absl::StatusOr<FleetCounts> MemoryStore::CountFleet() {
  MemoryTransaction txn(*db_);
  FleetCounts counts;
  for (const char* state : kFleetAgentStates) counts.agents_by_state[state] = 0;
  for (const char* status : {kJobQueued, kJobAssigned, kJobRunning, kJobDone, kJobFailed, kJobCancelled}) {
    counts.jobs_by_state[status] = 0;
  }
  for (const auto& [id, a] : txn.tables().agents) {
    ++counts.agents_by_state[a.removed_at                                           ? "removed"
                             : a.imported                                           ? "imported"
                             : memory::Online(a, txn.now(), options_.online_window) ? "online"
                                                                                    : "offline"];
  }
  for (const auto& [id, j] : txn.tables().jobs) ++counts.jobs_by_state[j.status];
  for (const auto& [id, r] : txn.tables().runs) {
    if (r.status != "done" && r.status != "failed" && r.status != "cancelled") ++counts.runs_in_flight;
  }
  return counts;
}

// --- enrollment tokens ---

absl::Status MemoryStore::CreateEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                                const std::string& description) {
  MemoryTransaction txn(*db_);
  auto& tokens = txn.tables().tokens;
  for (const auto& [id, token] : tokens) {
    if (id == token_id || token.sha256 == sha256_hex) {
      // PostgreSQL's unique violation (primary key or token_sha256).
      return absl::AlreadyExistsError(
          absl::StrCat("create token ", token_id, ": ", id == token_id ? "token id" : "token hash", " already exists"));
    }
  }
  tokens[token_id] = {token_id, sha256_hex, description, txn.now(), txn.seq(), std::nullopt};
  return absl::OkStatus();
}

absl::Status MemoryStore::EnsureEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                                const std::string& description) {
  MemoryTransaction txn(*db_);
  auto& tokens = txn.tables().tokens;
  for (const auto& [id, token] : tokens) {
    if (id == token_id || token.sha256 == sha256_hex) return absl::OkStatus();  // ON CONFLICT DO NOTHING
  }
  tokens[token_id] = {token_id, sha256_hex, description, txn.now(), txn.seq(), std::nullopt};
  return absl::OkStatus();
}

absl::Status MemoryStore::RevokeEnrollmentToken(const std::string& token_id) {
  MemoryTransaction txn(*db_);
  auto it = txn.tables().tokens.find(token_id);
  if (it == txn.tables().tokens.end()) {
    return absl::NotFoundError(absl::StrCat("enrollment token \"", token_id, "\" not found"));
  }
  if (it->second.revoked_at) {
    return absl::FailedPreconditionError(absl::StrCat(
        "enrollment token \"", token_id, "\" was already revoked at ",
        absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", *it->second.revoked_at, absl::UTCTimeZone()), "; nothing changed"));
  }
  it->second.revoked_at = txn.now();
  Notification disconnect{.kind = NotificationKind::kDisconnect};
  for (const auto& [id, a] : txn.tables().agents) {
    if (a.token_id == token_id && !a.removed_at) disconnect.agent_ids.push_back(id);
  }
  txn.Notify(std::move(disconnect));
  return absl::OkStatus();
}

absl::StatusOr<std::string> MemoryStore::FindEnrollmentToken(const std::string& sha256_hex) {
  MemoryTransaction txn(*db_);
  for (const auto& [id, token] : txn.tables().tokens) {
    if (token.sha256 != sha256_hex) continue;
    if (token.revoked_at) return absl::PermissionDeniedError(absl::StrCat("enrollment token ", id, " revoked"));
    return id;
  }
  return absl::NotFoundError("enrollment token unknown");
}

absl::StatusOr<std::vector<v1::TokenInfo>> MemoryStore::ListEnrollmentTokens() {
  MemoryTransaction txn(*db_);
  std::vector<const memory::Token*> sorted;
  for (const auto& [id, token] : txn.tables().tokens) sorted.push_back(&token);
  std::sort(sorted.begin(), sorted.end(), [](const memory::Token* a, const memory::Token* b) {
    return std::tie(a->created_at, a->token_id) < std::tie(b->created_at, b->token_id);
  });
  std::vector<v1::TokenInfo> tokens;
  for (const memory::Token* t : sorted) {
    v1::TokenInfo& token = tokens.emplace_back();
    token.set_token_id(t->token_id);
    token.set_description(t->description);
    token.set_created_unix_ns(absl::ToUnixNanos(t->created_at));
    token.set_revoked_unix_ns(t->revoked_at ? absl::ToUnixNanos(*t->revoked_at) : 0);
    uint32_t agents = 0;
    for (const auto& [id, a] : txn.tables().agents) agents += a.token_id == t->token_id ? 1 : 0;
    token.set_agents(agents);
  }
  return tokens;
}

absl::StatusOr<std::vector<Store::Disconnect>> MemoryStore::AgentsToDisconnect(
    const std::vector<std::string>& agent_ids, const std::vector<std::string>& session_ids) {
  std::vector<Disconnect> found;
  if (agent_ids.empty()) return found;
  FLEETMARK_RETURN_IF_ERROR(internal::CheckDisconnectArguments(agent_ids, session_ids));
  MemoryTransaction txn(*db_);
  std::map<std::string, Disconnect> by_id;
  for (size_t i = 0; i < agent_ids.size(); ++i) {
    auto it = txn.tables().agents.find(absl::AsciiStrToLower(agent_ids[i]));
    if (it == txn.tables().agents.end()) continue;
    const Agent& a = it->second;
    const memory::Token* token = nullptr;
    if (auto t = txn.tables().tokens.find(a.token_id); !a.token_id.empty() && t != txn.tables().tokens.end()) {
      token = &t->second;
    }
    Disconnect d;
    d.agent_id = a.agent_id;
    if (a.removed_at) {
      d.reason = kAgentRemovedReason;
    } else if (token != nullptr && token->revoked_at) {
      d.reason = absl::StrCat("enrollment token ", a.token_id, " revoked");
    } else if (!session_ids.empty() && a.session_id != session_ids[i]) {
      d.identity_in_use = true;
      d.reason = absl::StrCat(kIdentityInUsePrefix, "another process with the credential of agent \"", a.name,
                              "\" took its session over (now on coordinator ", a.coordinator_id,
                              ") after this one fell silent; this process stops its job and retries");
    } else {
      continue;
    }
    by_id.emplace(d.agent_id, std::move(d));
  }
  for (auto& [id, d] : by_id) found.push_back(std::move(d));
  return found;
}

// --- agents ---

absl::StatusOr<AgentIdentity> MemoryStore::FindAgentByName(const std::string& name) {
  MemoryTransaction txn(*db_);
  for (const auto& [id, a] : txn.tables().agents) {
    if (a.name != name || a.removed_at) continue;
    AgentIdentity identity{a.agent_id, a.name, a.credential_sha256, false};
    auto t = txn.tables().tokens.find(a.token_id);
    identity.token_revoked = t != txn.tables().tokens.end() && t->second.revoked_at.has_value();
    return identity;
  }
  return absl::NotFoundError(absl::StrCat("agent \"", name, "\" not found"));
}

absl::StatusOr<std::string> MemoryStore::RegisterAgent(const AgentRegistration& reg) {
  if (!reg.agent_id.empty()) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", reg.agent_id));
  MemoryTransaction txn(*db_);
  auto& agents = txn.tables().agents;
  const std::string host_bytes = reg.host.SerializeAsString();
  Agent* agent = nullptr;
  bool host_changed = true;
  if (reg.agent_id.empty()) {
    for (const auto& [id, a] : agents) {
      if (a.name == reg.name && !a.removed_at) {
        return absl::AlreadyExistsError(
            absl::StrCat("agent name \"", reg.name, "\" is taken by enrolled agent ", id,
                         " (a name belongs to the agent holding its credential): choose another --name, or, if that "
                         "agent is gone or lost its credential, remove it first with: fleetmark agents remove ",
                         reg.name));
      }
    }
    const std::string id = txn.NewId();
    agent = &agents[id];
    agent->agent_id = id;
    agent->name = reg.name;
    agent->credential_sha256 = reg.credential_sha256;
    agent->token_id = reg.token_id;
    agent->seq = txn.seq();
  } else {
    auto it = agents.find(absl::AsciiStrToLower(reg.agent_id));
    if (it == agents.end() || it->second.removed_at) {
      return absl::NotFoundError(absl::StrCat("agent ", reg.agent_id, " (\"", reg.name, "\") was removed"));
    }
    Agent& old = it->second;
    const double heard_s = std::max(0.0, absl::ToDoubleSeconds(txn.now() - old.last_seen));
    const bool live =
        old.state == "online" && !old.session_id.empty() && old.last_seen > txn.now() - options_.online_window;
    const std::string& held = old.session_id;
    const bool same_process = !reg.instance_id.empty() && old.session_instance == reg.instance_id;
    const bool ended_here = reg.session_ended_here && !held.empty() && reg.session_ended_here(held);
    if (live && held != reg.session_id && !same_process && !ended_here) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%sagent \"%s\" has a live session on coordinator %s (heard %.0f s ago) from another process; "
          "one identity has one session at a time (is a copy of this agent's credential file in use?); "
          "this process is refused until that session ends or is silent for %s (at least %.0f s more)",
          kIdentityInUsePrefix, reg.name, old.coordinator_id, heard_s, absl::FormatDuration(options_.online_window),
          std::max(0.0, absl::ToDoubleSeconds(options_.online_window) - heard_s)));
    }
    if (old.state == "online" && !held.empty() && held != reg.session_id && !same_process && !ended_here) {
      txn.Notify({.kind = NotificationKind::kDisconnect, .agent_ids = {old.agent_id}});
    }
    host_changed = old.host_bytes != host_bytes;
    agent = &old;
  }
  agent->host = reg.host;
  agent->host_bytes = host_bytes;
  agent->labels = reg.labels;
  agent->engine_version = reg.engine_version;
  agent->state = "online";
  agent->coordinator_id = options_.coordinator_id;
  agent->session_id = reg.session_id;
  agent->session_instance = reg.instance_id;
  agent->last_seen = txn.now();
  agent->machine_id = reg.machine_id;
  agent->boot_id = reg.boot_id;
  agent->exclusive_cpus = reg.exclusive_cpus;
  // Every registration moves the version (a new profile object).
  ++agent->profile_version;
  auto profile = std::make_shared<AgentProfile>();
  profile->host = reg.host;
  profile->labels = reg.labels;
  agent->profile = std::move(profile);
  if (host_changed) txn.tables().host_snapshots.push_back(agent->agent_id);
  return agent->agent_id;
}

absl::StatusOr<RemovedAgent> MemoryStore::RemoveAgent(const std::string& name) {
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  Agent* agent = nullptr;
  bool known = false;
  for (auto& [id, a] : t.agents) {
    if (a.name != name) continue;
    known = true;
    if (!a.removed_at) agent = &a;
  }
  if (agent == nullptr) {
    return absl::NotFoundError(absl::StrCat("agent \"", name, "\" ", known ? "was already removed" : "not found",
                                            " (`fleetmark agents list --all` lists every agent)"));
  }
  agent->removed_at = txn.now();
  agent->state = "offline";
  RemovedAgent removed;
  removed.agent_id = agent->agent_id;
  std::set<std::string> runs;
  for (auto& [id, job] : t.jobs) {
    if (job.agent_id != agent->agent_id ||
        (job.status != kJobQueued && job.status != kJobAssigned && job.status != kJobRunning)) {
      continue;
    }
    job.status = kJobFailed;
    job.failure_kind = "infrastructure";
    job.message = absl::StrCat("infrastructure: agent ", name, " removed (fleetmark agents remove)");
    job.lease_expires_at.reset();
    job.finished_at = txn.now();
    removed.failed_jobs.push_back(id);
    runs.insert(job.run_id);
  }
  for (const std::string& run_id : runs) memory::RefreshRun(txn, run_id);
  txn.Notify({.kind = NotificationKind::kDisconnect, .agent_ids = {agent->agent_id}});
  return removed;
}

absl::StatusOr<ReleasedAgent> MemoryStore::ReleaseAgent(const std::string& name) {
  MemoryTransaction txn(*db_);
  for (auto& [id, a] : txn.tables().agents) {
    if (a.name != name || a.removed_at) continue;
    if (a.health != kHealthQuarantined) {
      return absl::FailedPreconditionError(absl::StrCat("agent \"", name, "\" is not quarantined"));
    }
    ReleasedAgent released{a.agent_id, a.quarantine_reason, a.quarantined_at.value_or(absl::UnixEpoch())};
    a.health = kHealthOk;
    a.quarantine_reason.clear();
    a.quarantined_at.reset();
    a.released_at = txn.now();
    a.released_seq = txn.seq();
    a.deferred_in_a_row = 0;
    a.noise_percent.reset();
    a.noise_nights = 0;
    return released;
  }
  return absl::NotFoundError(absl::StrCat("agent \"", name, "\" not found (`fleetmark agents list` lists the agents)"));
}

absl::Status MemoryStore::SetAgentOffline(const std::string& agent_id, const std::string& session_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  MemoryTransaction txn(*db_);
  auto it = txn.tables().agents.find(absl::AsciiStrToLower(agent_id));
  if (it != txn.tables().agents.end() && it->second.session_id == session_id) {
    it->second.state = "offline";
    it->second.last_seen = txn.now();
  }
  return absl::OkStatus();
}

absl::Status MemoryStore::RecordLiveness(const std::vector<AgentLiveness>& batch, absl::Duration lease,
                                         const std::vector<std::string>& renew_also) {
  for (const std::string& id : renew_also) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("renew_also[]", id));
  for (const AgentLiveness& a : batch) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", a.agent_id));
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::set<std::string> renew;
  for (const AgentLiveness& l : batch) {
    const std::string id = absl::AsciiStrToLower(l.agent_id);
    renew.insert(id);
    auto it = t.agents.find(id);
    if (it == t.agents.end() || it->second.session_id != l.session_id) continue;
    it->second.last_seen = absl::FromUnixMicros(absl::ToUnixMicros(l.last_seen));
    it->second.rss_bytes = l.rss_bytes;
    it->second.cpu_seconds = l.cpu_seconds;
  }
  for (const std::string& id : renew_also) renew.insert(absl::AsciiStrToLower(id));
  for (auto& [id, job] : t.jobs) {
    if (renew.count(job.agent_id) > 0 && (job.status == kJobAssigned || job.status == kJobRunning)) {
      job.lease_expires_at = txn.now() + lease;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AgentSummary>> MemoryStore::ListAgentSummaries() {
  MemoryTransaction txn(*db_);
  std::vector<const Agent*> listed;
  for (const auto& [id, a] : txn.tables().agents) {
    if (!a.removed_at && !a.imported) listed.push_back(&a);  // an imported device record is never selected
  }
  std::sort(listed.begin(), listed.end(), [](const Agent* a, const Agent* b) { return a->name < b->name; });
  std::vector<AgentSummary> agents;
  for (const Agent* a : listed) {
    AgentSummary& s = agents.emplace_back();
    s.agent_id = a->agent_id;
    s.name = a->name;
    auto t = txn.tables().tokens.find(a->token_id);
    const bool revoked = t != txn.tables().tokens.end() && t->second.revoked_at.has_value();
    s.online = memory::Online(*a, txn.now(), options_.online_window) && !revoked;
    s.quarantined = a->health == kHealthQuarantined;
    s.quarantine_reason = a->quarantine_reason;
    s.profile = a->profile != nullptr ? a->profile : std::make_shared<const AgentProfile>();
  }
  return agents;
}

absl::StatusOr<std::vector<AgentSummary>> MemoryStore::ListAgentSummariesNamed(const std::string& name) {
  return Store::ListAgentSummariesNamed(name);
}

absl::StatusOr<std::vector<v1::AgentInfo>> MemoryStore::ListAgents(bool include_removed) {
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::vector<const Agent*> listed;
  for (const auto& [id, a] : t.agents) {
    if (include_removed || !a.removed_at) listed.push_back(&a);
  }
  // By name, the agent holding it (not removed) first, then removed ones by removal.
  std::sort(listed.begin(), listed.end(), [](const Agent* a, const Agent* b) {
    if (a->name != b->name) return a->name < b->name;
    if (a->removed_at.has_value() != b->removed_at.has_value()) return !a->removed_at.has_value();
    return a->removed_at.value_or(absl::InfinitePast()) < b->removed_at.value_or(absl::InfinitePast());
  });
  std::map<std::string, std::string> running;  // agent -> an assigned/running job
  for (const auto& [id, job] : t.jobs) {
    if (job.status == kJobAssigned || job.status == kJobRunning) running.emplace(job.agent_id, id);
  }
  std::vector<v1::AgentInfo> agents;
  for (const Agent* a : listed) {
    v1::AgentInfo& info = agents.emplace_back();
    info.set_agent_id(a->agent_id);
    info.set_name(a->name);
    info.set_imported(a->imported);
    info.set_state(a->removed_at                                           ? "removed"
                   : a->imported                                           ? "imported"
                   : memory::Online(*a, txn.now(), options_.online_window) ? "online"
                                                                           : "offline");
    info.set_removed_unix_ns(a->removed_at ? absl::ToUnixNanos(*a->removed_at) : 0);
    *info.mutable_host() = a->host;
    for (const auto& [k, v] : a->labels) (*info.mutable_labels())[k] = v;
    info.set_last_seen_unix_ns(absl::ToUnixNanos(a->last_seen));
    auto job = running.find(a->agent_id);
    info.set_running_job_id(job != running.end() ? job->second : "");
    info.set_rss_bytes(a->rss_bytes);
    info.set_cpu_seconds(a->cpu_seconds);
    info.set_health(a->health);
    info.set_quarantine_reason(a->quarantine_reason);
    info.set_quarantined_unix_ns(a->quarantined_at ? absl::ToUnixNanos(*a->quarantined_at) : 0);
    if (a->noise_percent) info.set_noise_percent(*a->noise_percent);
    info.set_noise_nights(a->noise_nights);
    info.set_machine_id(a->machine_id);
    info.set_boot_id(a->boot_id);
    info.set_exclusive_cpus(a->exclusive_cpus);
  }
  internal::MarkAgentsOnOneHost(agents);
  return agents;
}

}  // namespace fleetmark::store
