// The agents slice of Store (store.h): registrations (hellos), identities, liveness,
// quarantine release, removal and the fleet listings selectors read. Services that use
// only agents take an AgentStore&.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetmark/v1/control.pb.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::store {

// What an agent's hello registers.
struct AgentRegistration {
  // "" for a new enrollment; else the agent id its credential authenticated.
  std::string agent_id;
  std::string name;
  // SHA-256 (hex) of the credential issued in Welcome (new enrollments only).
  std::string credential_sha256;
  std::string token_id;  // the enrollment token used (new enrollments only)
  v1::HostInfo host;
  std::map<std::string, std::string> labels;
  std::string engine_version;
  std::vector<std::string> strategies, workloads, scenarios;
  // Id of the stream registering the agent; SetAgentOffline only acts for that stream.
  std::string session_id;
  // Hello.instance_id of the registering process ("" from agents before it: never the
  // process holding a session).
  std::string instance_id;
  // Hello.machine_id, boot_id, exclusive_cpus: the host identity the same-host rule
  // compares (coordinator/scheduler/same_host.h); "" = unknown.
  std::string machine_id;
  std::string boot_id;
  bool exclusive_cpus = false;
  // Whether the recorded session `session_id` is one this coordinator process opened and
  // has seen end (certain knowledge, unlike a silence); null = knows of none. Called
  // inside RegisterAgent's transaction: must return at once and not call the store.
  std::function<bool(const std::string& session_id)> session_ended_here;
};

// An agent's stored identity, for authenticating a hello with a credential.
struct AgentIdentity {
  std::string agent_id;
  std::string name;
  std::string credential_sha256;
  bool token_revoked = false;  // its enrollment token was revoked since
};

// An agent as matched by selectors: what the selector language can ask about.
// What a selector matches of an agent besides its name (Selector::Matches): written by
// its registrations (hellos). Immutable once built, so summaries share it.
struct AgentProfile {
  v1::HostInfo host;
  std::map<std::string, std::string> labels;
};

struct AgentSummary {
  std::string agent_id;
  std::string name;
  bool online = false;
  std::shared_ptr<const AgentProfile> profile;  // never null
  // Quarantined agents are skipped by selectors without `health=any`.
  bool quarantined = false;
  std::string quarantine_reason;
};

// What `agents release` ended.
struct ReleasedAgent {
  std::string agent_id;
  std::string reason;  // why it was quarantined
  absl::Time quarantined_at;
};

// What `agents remove` did.
struct RemovedAgent {
  std::string agent_id;
  std::vector<std::string> failed_jobs;  // its unfinished jobs, now failed
};

// Liveness reported by a connected agent since the last flush.
struct AgentLiveness {
  std::string agent_id;
  absl::Time last_seen;
  uint64_t rss_bytes = 0;
  double cpu_seconds = 0;
  // The stream it was heard on: recorded only while that stream holds the agent's
  // session (a displaced stream renews nothing).
  std::string session_id;
};

// Agents; PgStore and MemoryStore implement it as Store.
class AgentStore {
 public:
  virtual ~AgentStore() = default;

  // The agent (not removed) named `name`; NotFound if none.
  virtual absl::StatusOr<AgentIdentity> FindAgentByName(const std::string& name) = 0;
  // Registers a hello: with registration.agent_id empty, a new enrollment, which gets a
  // new agent id, or AlreadyExists (naming `fleetmark agents remove NAME`) if an agent
  // (not removed) has the name — atomic across coordinators (a unique index); else the
  // reconnect of that agent (authenticated by its credential by the caller), NotFound
  // if it was removed meanwhile. Marks it online (owned by this coordinator and this
  // session), records a host snapshot when the host changed; returns its agent id.
  // One identity has one live session fleet-wide: a reconnect takes the agent's session
  // only if the recorded one is not live (offline, or silent for
  // StoreOptions::online_window), is this same session, comes from the same process
  // (registration.instance_id, non-empty: its old stream is stale) or ended here
  // (registration.session_ended_here). Otherwise FailedPrecondition starting with
  // kIdentityInUsePrefix, naming the coordinator holding it and how long ago it was heard
  // (nothing written). Taking a session another process held notifies its coordinator
  // (disconnect) on commit.
  virtual absl::StatusOr<std::string> RegisterAgent(const AgentRegistration& registration) = 0;
  // `fleetmark agents remove NAME`: marks the agent (not removed) named `name` removed.
  // Its results, jobs and host snapshots stay; its credential stops working
  // (FindAgentByName no longer finds it), it is never selected, listed only with
  // include_removed, and its name may be enrolled again (a new agent id). Its queued,
  // assigned and running jobs fail as infrastructure ("agent NAME removed"), and their
  // runs are updated; the agent is notified (disconnect) on commit. NotFound if no such
  // agent (or it was removed already).
  virtual absl::StatusOr<RemovedAgent> RemoveAgent(const std::string& name) = 0;
  // `fleetmark agents release NAME`: ends the quarantine of the agent (not removed) named
  // `name`; its deferred-job streak restarts and calibration nights measured before now
  // no longer count (released_at: a new baseline). NotFound if no such agent,
  // FailedPrecondition if it is not quarantined.
  virtual absl::StatusOr<ReleasedAgent> ReleaseAgent(const std::string& name) = 0;
  // Marks the agent offline if `session_id` is still its registered stream (a
  // reconnect may already have replaced it).
  virtual absl::Status SetAgentOffline(const std::string& agent_id, const std::string& session_id) = 0;
  // Records liveness of connected agents and renews the leases of their
  // assigned/running jobs to now + `lease`; also renews the leases of `renew_also`
  // (agents whose renewals the caller could not record while the database was
  // unreachable, without touching their liveness). One transaction, run even when both
  // are empty: an OK status says the database took a write just now. InvalidArgument
  // naming the field if an id is not a UUID.
  virtual absl::Status RecordLiveness(const std::vector<AgentLiveness>& batch, absl::Duration lease,
                                      const std::vector<std::string>& renew_also = {}) = 0;
  // Every agent (online state computed with options.online_window), ordered by name. An
  // agent whose enrollment token is revoked is never online (its stream is being ended).
  // Removed agents are not listed. PgStore keeps the parsed profiles it read and reads
  // again only those a registration changed since (agents.profile_version), also
  // through another coordinator.
  virtual absl::StatusOr<std::vector<AgentSummary>> ListAgentSummaries() = 0;
  // ListAgentSummaries' entry for the agent named `name` (empty, or one agent): what a
  // submit selecting one agent by name reads instead of the whole fleet. The default
  // filters ListAgentSummaries(); PgStore reads the one row.
  virtual absl::StatusOr<std::vector<AgentSummary>> ListAgentSummariesNamed(const std::string& name);
  // Agents ordered by name, state "online" | "offline" | "removed" (removed agents only
  // with `include_removed`, after the agent holding the name now).
  virtual absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents(bool include_removed = false) = 0;
};

}  // namespace fleetmark::store
