#include "coordinator/service/result_ingestor.h"
#include "engine/common/steady_wait.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace fleetmark::service {

ResultIngestor::ResultIngestor(store::RunStore& store, ResultIngestorOptions options, CoordinatorMetrics* metrics)
    : queue_(
          "result(s)",
          {.write =
               [&store, metrics](const std::vector<const Item*>& batch) {
                 std::vector<store::RunStore::AgentResult> rows;
                 rows.reserve(batch.size());
                 for (const Item* item : batch) rows.push_back({item->agent_id, &item->result});
                 const absl::Time start = SteadyNow();
                 absl::StatusOr<std::vector<store::ResultOutcome>> outcomes = store.InsertResults(rows);
                 if (metrics != nullptr) {
                   metrics->ingest_commit_seconds.Observe(absl::ToDoubleSeconds(SteadyNow() - start));
                   metrics->ingest_batch_size.Observe(static_cast<double>(rows.size()));
                   if (outcomes.ok()) {
                     metrics->results_ingested.Add(static_cast<uint64_t>(std::count_if(
                         outcomes->begin(), outcomes->end(), [](const store::ResultOutcome& o) { return o.stored; })));
                   }
                 }
                 return outcomes;
               },
           .reject =
               [](const Item& item, const absl::Status& status) {
                 store::ResultOutcome rejected;
                 rejected.result_id = item.result.result_id();
                 rejected.rejected = true;
                 rejected.message = std::string(status.message());
                 return rejected;
               }},
          options) {}

void ResultIngestor::Submit(std::string agent_id, v1::CaseResult result, Callback done) {
  queue_.Submit(Item{std::move(agent_id), std::move(result)}, std::move(done));
}

}  // namespace fleetmark::service
