// How far a PostgreSQL streaming replica is behind its primary, from WAL positions:
// the bytes of WAL the primary wrote that the replica has not replayed
// (pg_current_wal_lsn() on the primary minus pg_last_wal_replay_lsn() on the replica,
// PostgreSQL 15 docs 9.27.4 and 9.27.5) and for how long it has been behind. A primary
// with nothing new to replay shows lag 0 however long ago its last transaction was, so
// an idle primary does not look behind (a replay timestamp alone would).
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto probe, ReplicaLagProbe::Create(primary_uri, replica_uri));
//   absl::StatusOr<ReplicaLag> lag = probe->Measure();   // Unavailable: replica down
//
// Thread-safety: one thread at a time per probe (it owns two connections). Only code
// under coordinator/store/ includes the .cc's libpqxx; this header has no pqxx types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::store {

struct ReplicaLag {
  uint64_t bytes = 0;  // WAL written on the primary, not yet replayed on the replica
  // How long the replica has been behind: 0 when `bytes` is 0, else the shorter of the
  // time since the last transaction it replayed (pg_last_xact_replay_timestamp()) and
  // the time since this probe last saw it caught up.
  absl::Duration replay = absl::ZeroDuration();
  bool replay_paused = false;  // pg_is_wal_replay_paused() (an operator or a test paused it)
};

class ReplicaLagProbe {
 public:
  // Checks the URIs (InvalidArgument naming read_database_uri for an empty one or one
  // equal to the primary's); connects lazily, so a replica that is down now is not an
  // error here.
  static absl::StatusOr<std::unique_ptr<ReplicaLagProbe>> Create(std::string primary_uri, std::string replica_uri);
  ~ReplicaLagProbe();

  // One measurement: a query on the primary, then one on the replica (reconnecting a
  // connection that broke). Unavailable naming the server ("read replica: ..." or
  // "primary: ...") when one cannot be reached; FailedPrecondition when the replica
  // is not in recovery (not a standby: pg_is_in_recovery() is false).
  absl::StatusOr<ReplicaLag> Measure();

 private:
  struct Connections;
  ReplicaLagProbe(std::string primary_uri, std::string replica_uri);

  const std::string primary_uri_;
  const std::string replica_uri_;
  std::unique_ptr<Connections> connections_;
  absl::Time caught_up_at_ = absl::InfinitePast();  // last Measure that saw bytes == 0
};

}  // namespace fleetmark::store
