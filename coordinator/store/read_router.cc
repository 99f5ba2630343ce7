#include "coordinator/store/read_router.h"
#include "engine/common/steady_wait.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/common/log.h"

namespace fleetmark::store {

absl::Status ValidateReadRouterOptions(const ReadRouterOptions& options) {
  if (options.primary_uri.empty()) return absl::InvalidArgumentError("database_uri: must not be empty");
  if (options.replica_uri.empty()) return absl::InvalidArgumentError("read_database_uri: must not be empty");
  if (options.max_lag < absl::Seconds(1) || options.max_lag > absl::Hours(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("read_max_lag: 1s <= read_max_lag <= 1h, got ", absl::FormatDuration(options.max_lag)));
  }
  if (options.probe_interval < absl::Milliseconds(10) || options.probe_interval > absl::Minutes(1)) {
    return absl::InvalidArgumentError(absl::StrCat("read replica probe interval: 10ms <= interval <= 1m, got ",
                                                   absl::FormatDuration(options.probe_interval)));
  }
  return absl::OkStatus();
}

ReadRouter::ReadRouter(ReadRouterOptions options, std::unique_ptr<ReplicaLagProbe> probe)
    : options_(std::move(options)), probe_(std::move(probe)) {
  state_.reason = "read replica: not measured yet";
}

absl::StatusOr<std::unique_ptr<ReadRouter>> ReadRouter::Start(const ReadRouterOptions& options) {
  if (absl::Status valid = ValidateReadRouterOptions(options); !valid.ok()) return valid;
  absl::StatusOr<std::unique_ptr<ReplicaLagProbe>> probe =
      ReplicaLagProbe::Create(options.primary_uri, options.replica_uri);
  if (!probe.ok()) return probe.status();
  std::unique_ptr<ReadRouter> router(new ReadRouter(options, *std::move(probe)));
  router->ProbeOnce();
  router->thread_ = std::thread([r = router.get()] { r->ProbeLoop(); });
  return router;
}

ReadRouter::~ReadRouter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void ReadRouter::ProbeOnce() {
  absl::StatusOr<ReplicaLag> lag = probe_->Measure();
  absl::MutexLock lock(&mu_);
  const bool was_replica = state_.replica;
  ++state_.probes;
  if (!lag.ok()) {
    state_.replica = false;
    state_.lag_known = false;
    state_.reason = std::string(lag.status().message());
  } else {
    state_.lag_known = true;
    state_.lag = *lag;
    state_.replica = lag->replay <= options_.max_lag;
    state_.reason = state_.replica ? ""
                                   : absl::StrCat("read replica ", absl::FormatDuration(lag->replay), " (", lag->bytes,
                                                  " bytes of WAL) behind, over --read_max_lag ",
                                                  absl::FormatDuration(options_.max_lag));
  }
  if (was_replica != state_.replica || state_.probes == 1) {
    Log(state_.replica ? LogLevel::kInfo : LogLevel::kWarning,
        state_.replica ? std::string("reads served by the read replica")
                       : absl::StrCat("reads served by the primary: ", state_.reason));
  }
}

void ReadRouter::ProbeLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (AwaitSteadyFor(mu_, absl::Condition(&stopping_), options_.probe_interval)) return;
    }
    ProbeOnce();
  }
}

bool ReadRouter::UseReplica() const {
  absl::MutexLock lock(&mu_);
  return state_.replica;
}

void ReadRouter::ReportReplicaFailure(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (!state_.replica) return;
  state_.replica = false;
  state_.lag_known = false;
  state_.reason = absl::StrCat("read replica: ", status.message());
  Log(LogLevel::kWarning, absl::StrCat("reads served by the primary: ", state_.reason));
}

ReadRouter::State ReadRouter::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

}  // namespace fleetmark::store
