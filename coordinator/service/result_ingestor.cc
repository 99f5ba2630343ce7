#include "coordinator/service/result_ingestor.h"

#include <utility>
#include <vector>

namespace fleetmark::service {

ResultIngestor::ResultIngestor(store::Store& store, ResultIngestorOptions options)
    : queue_("result(s)",
             {.write =
                  [&store](const std::vector<const Item*>& batch) {
                    std::vector<store::Store::AgentResult> rows;
                    rows.reserve(batch.size());
                    for (const Item* item : batch) rows.push_back({item->agent_id, &item->result});
                    return store.InsertResults(rows);
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
