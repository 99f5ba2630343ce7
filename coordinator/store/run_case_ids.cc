#include "coordinator/store/run_case_ids.h"

#include <utility>

namespace fleetmark::store {

absl::flat_hash_map<std::string, RunCaseIds::CaseIds> RunCaseIds::Find(const std::vector<std::string>& run_ids,
                                                                       std::vector<std::string>* missing) const {
  absl::flat_hash_map<std::string, CaseIds> found;
  absl::MutexLock lock(&mu_);
  for (const std::string& run_id : run_ids) {
    auto it = runs_.find(run_id);
    if (it == runs_.end()) {
      missing->push_back(run_id);
    } else {
      found.emplace(run_id, it->second);
    }
  }
  return found;
}

void RunCaseIds::Put(const std::string& run_id, CaseIds case_ids) {
  absl::MutexLock lock(&mu_);
  if (runs_.size() >= kMaxRuns && !runs_.contains(run_id)) runs_.clear();
  runs_.insert_or_assign(run_id, std::move(case_ids));
}

}  // namespace fleetmark::store
