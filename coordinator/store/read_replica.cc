#include "coordinator/store/read_replica.h"
#include "engine/common/steady_wait.h"

#include <algorithm>
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "coordinator/store/connection_pool.h"

namespace fleetmark::store {

struct ReplicaLagProbe::Connections {
  std::unique_ptr<pqxx::connection> primary;
  std::unique_ptr<pqxx::connection> replica;
};

namespace {

// Runs `fn(txn)` on `*conn` (opened on `uri` first if needed); a failure closes the
// connection, so the next call reconnects, and is Unavailable prefixed with `server`.
template <typename Fn>
auto OnConnection(std::unique_ptr<pqxx::connection>& conn, const std::string& uri, const char* server, Fn&& fn)
    -> absl::StatusOr<decltype(fn(std::declval<pqxx::nontransaction&>()))> {
  if (conn == nullptr || !conn->is_open()) {
    ConnectionOptions options;
    options.uri = uri;
    options.application_name = "fleetmark-coordinator (replica lag)";
    absl::StatusOr<std::unique_ptr<pqxx::connection>> opened = ConnectionPool::Connect(options);
    if (!opened.ok()) return absl::UnavailableError(absl::StrCat(server, ": ", opened.status().message()));
    conn = *std::move(opened);
  }
  try {
    pqxx::nontransaction txn(*conn);
    return fn(txn);
  } catch (const std::exception& e) {
    conn.reset();
    return absl::UnavailableError(absl::StrCat(server, ": ", e.what()));
  }
}

}  // namespace

ReplicaLagProbe::ReplicaLagProbe(std::string primary_uri, std::string replica_uri)
    : primary_uri_(std::move(primary_uri)),
      replica_uri_(std::move(replica_uri)),
      connections_(std::make_unique<Connections>()) {}

ReplicaLagProbe::~ReplicaLagProbe() = default;

absl::StatusOr<std::unique_ptr<ReplicaLagProbe>> ReplicaLagProbe::Create(std::string primary_uri,
                                                                         std::string replica_uri) {
  if (replica_uri.empty()) return absl::InvalidArgumentError("read_database_uri: must not be empty");
  if (replica_uri == primary_uri) {
    return absl::InvalidArgumentError(
        "read_database_uri: the same URI as database_uri; give the streaming replica's (or leave it unset)");
  }
  return std::unique_ptr<ReplicaLagProbe>(new ReplicaLagProbe(std::move(primary_uri), std::move(replica_uri)));
}

absl::StatusOr<ReplicaLag> ReplicaLagProbe::Measure() {
  // The primary first: whatever the replica has replayed by the time it answers is
  // compared with a position the primary had already written.
  absl::StatusOr<std::string> primary_lsn = OnConnection(
      connections_->primary, primary_uri_, "primary",
      [](pqxx::nontransaction& txn) { return txn.exec("SELECT pg_current_wal_lsn()::text")[0][0].as<std::string>(); });
  if (!primary_lsn.ok()) return primary_lsn.status();
  struct Replayed {
    bool in_recovery = false;
    int64_t behind_bytes = 0;
    double since_last_replay_seconds = -1;  // < 0: nothing replayed since start
    bool paused = false;
  };
  absl::StatusOr<Replayed> replayed =
      OnConnection(connections_->replica, replica_uri_, "read replica", [&](pqxx::nontransaction& txn) {
        pqxx::row row = txn.exec_params1(
            "SELECT pg_is_in_recovery(), "
            "       coalesce(pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()), 0)::bigint, "
            "       extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8, "
            "       pg_is_in_recovery() AND pg_is_wal_replay_paused()",
            *primary_lsn);
        Replayed r;
        r.in_recovery = row[0].as<bool>();
        r.behind_bytes = row[1].as<int64_t>();
        r.since_last_replay_seconds = row[2].is_null() ? -1 : row[2].as<double>();
        r.paused = row[3].as<bool>();
        return r;
      });
  if (!replayed.ok()) return replayed.status();
  if (!replayed->in_recovery) {
    return absl::FailedPreconditionError(
        "read replica: not a standby (pg_is_in_recovery() is false): --read_database_uri must name a streaming "
        "replica of --database_uri");
  }
  const absl::Time now = SteadyNow();
  ReplicaLag lag;
  lag.replay_paused = replayed->paused;
  // A position the replica replayed past the one read (it replayed meanwhile) is no lag.
  lag.bytes = static_cast<uint64_t>(std::max<int64_t>(0, replayed->behind_bytes));
  if (lag.bytes == 0) {
    caught_up_at_ = now;
    return lag;
  }
  absl::Duration behind = absl::InfiniteDuration();
  if (replayed->since_last_replay_seconds >= 0) behind = absl::Seconds(replayed->since_last_replay_seconds);
  if (caught_up_at_ != absl::InfinitePast()) behind = std::min(behind, now - caught_up_at_);
  lag.replay = std::max(absl::ZeroDuration(), behind);
  return lag;
}

}  // namespace fleetmark::store
