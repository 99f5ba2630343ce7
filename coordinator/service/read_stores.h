// Which store answers the read-only control RPCs (`runs list`, `export`, `compare`:
// ListRuns, ExportResults, StreamResults): the store on the streaming replica
// (--read_database_uri) while the ReadRouter says so (store/read_router.h), else the
// primary's. Writes, claims, WatchRun and `runs show` always use the primary.
//
//   ReadStores reads(primary, replica.get(), router.get());   // or (primary, nullptr, nullptr)
//   auto runs = reads.ForList([&](store::RunStore& s) { return s.ListRuns(20); });
//   store::RunStore& store = reads.ForRun(run_id);   // then resolve, index, load pages
//
// Thread-safety: safe from any thread (the stores and the router are).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "coordinator/store/read_router.h"
#include "coordinator/store/run_store.h"

namespace fleetmark::service {

// Whether a run in `status` (RunInfo.status) is over: done, failed or cancelled.
inline bool RunFinished(const std::string& status) {
  return status == "done" || status == "failed" || status == "cancelled";
}

class ReadStores {
 public:
  // `replica` and `router` both set, or both null (every read on `primary`). Not owned;
  // they must outlive this.
  ReadStores(store::RunStore& primary, store::RunStore* replica, store::ReadRouter* router)
      : primary_(primary),
        replica_(router != nullptr ? replica : nullptr),
        router_(replica_ != nullptr ? router : nullptr) {}

  // `read(store)` on the replica while the router says so; answered by the primary when
  // the replica fails (Unavailable, reported to the router) or lacks the row (NotFound).
  template <typename Read>
  auto ForList(Read&& read) -> decltype(read(std::declval<store::RunStore&>())) {
    if (router_ != nullptr && router_->UseReplica()) {
      auto answer = read(*replica_);
      if (answer.ok() || !(absl::IsUnavailable(answer.status()) || absl::IsNotFound(answer.status()))) return answer;
      if (absl::IsUnavailable(answer.status())) router_->ReportReplicaFailure(answer.status());
    }
    return read(primary_);
  }

  // The store to read run `id_or_prefix` (a UUID or a unique prefix) from: the replica
  // when the router says so and the replica holds the run as finished (done, failed or
  // cancelled: its results are complete there); else the primary, so a submitter
  // reads its own run as the primary has it. Two small queries on the replica.
  store::RunStore& ForRun(const std::string& id_or_prefix);

  // The primary, for the writes a read implies (e.g. recording that a run was exported).
  store::RunStore& primary() { return primary_; }

 private:
  store::RunStore& primary_;
  store::RunStore* const replica_;
  store::ReadRouter* const router_;
};

}  // namespace fleetmark::service
