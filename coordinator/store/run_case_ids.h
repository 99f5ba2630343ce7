// RunCaseIds: each run's case ids (runs.case_ids), kept in the coordinator so that
// ingestion checks a result's case id against its run without asking PostgreSQL per
// row. A run's case ids never change after its insert (InsertRun writes them once), so
// an entry is never stale; a pruned run's entry is unused (its jobs are gone first).
//
// Thread-safety: every method may be called from any thread (one mutex).
// Memory: at most kMaxRuns runs; past that the cache is emptied and refilled on demand
// (a coordinator ingests for the few runs in flight, not for thousands).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace fleetmark::store {

class RunCaseIds {
 public:
  // A run's case ids; nullptr for a run stored without them (before migration 0005, or
  // an internal run with no case list): every case id is accepted for it.
  using CaseIds = std::shared_ptr<const absl::flat_hash_set<std::string>>;
  static constexpr size_t kMaxRuns = 1024;

  // The cached entries of `run_ids` (distinct, lower-case uuid text); the runs not
  // cached are appended to `missing`.
  absl::flat_hash_map<std::string, CaseIds> Find(const std::vector<std::string>& run_ids,
                                                 std::vector<std::string>* missing) const;
  // Caches `case_ids` for `run_id` (nullptr: the run has none).
  void Put(const std::string& run_id, CaseIds case_ids);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, CaseIds> runs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::store
