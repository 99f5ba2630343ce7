#include "coordinator/service/result_export.h"

#include <atomic>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "coordinator/service/field_bytes.h"
#include "coordinator/service/grpc_status.h"
#include "engine/common/message_limits.h"
#include "engine/common/status_macros.h"

namespace fleetmark::service {

std::vector<ResultPage> PageResults(const store::ResultExportIndex& index, size_t page_bytes) {
  std::vector<ResultPage> pages(1);
  size_t bytes = 0;
  for (size_t i = 0; i < index.results.size(); ++i) {
    const size_t result_bytes = FieldBytes(index.results[i].bytes);
    if (pages.back().end > pages.back().begin && bytes + result_bytes > page_bytes) {
      pages.push_back({i, i});
      bytes = 0;
    }
    pages.back().end = i + 1;
    bytes += result_bytes;
  }
  return pages;
}

namespace {

// Loads the results [page.begin, page.end) of `index` into `out` (after what it holds).
absl::Status LoadPage(store::RunStore& store, const store::ResultExportIndex& index, ResultPage page,
                      v1::ExportResultsResponse* out) {
  std::vector<std::string> ids;
  ids.reserve(page.end - page.begin);
  for (size_t i = page.begin; i < page.end; ++i) ids.push_back(index.results[i].result_id);
  FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::CaseResult> results, store.LoadResults(ids));
  out->mutable_results()->Reserve(out->results_size() + static_cast<int>(results.size()));
  for (v1::CaseResult& result : results) *out->add_results() = std::move(result);
  return absl::OkStatus();
}

// The run and its hosts: what the first (or only) message of an export carries.
void SetHeader(const store::ResultExportIndex& index, v1::ExportResultsResponse* out) {
  *out->mutable_run() = index.run;
  for (const auto& [name, host] : index.hosts) (*out->mutable_hosts())[name] = host;
}

// StreamResults: the run's index first (resolving the id), then one page per write,
// each loaded on the executor after the previous write completed. As RunWatcher,
// exactly one of "a write in flight" or "a load posted" exists at any time, so Finish
// never races a write.
class ResultStreamer : public grpc::ServerWriteReactor<v1::ExportResultsResponse> {
 public:
  // The store is chosen on the executor (ReadStores::ForRun may query the replica).
  // record_export: once the last page is loaded, Store::RecordRunExported (on the primary).
  ResultStreamer(ReadStores& reads, Executor& executor, std::string run_id, std::string agent_name, bool record_export)
      : state_(std::make_shared<State>(reads, executor, std::move(run_id), std::move(agent_name))) {
    state_->record_export = record_export;
    state_->reactor = this;
    state_->executor.Post([state = state_] { Start(state); });
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"));
      return;
    }
    if (state_->next_page >= state_->pages.size()) {
      Finish(grpc::Status::OK);
      return;
    }
    state_->executor.Post([state = state_] { WriteNextPage(state); });
  }
  void OnCancel() override { state_->cancelled = true; }
  void OnDone() override { delete this; }

 private:
  struct State {
    State(ReadStores& r, Executor& e, std::string id, std::string agent)
        : reads(r), executor(e), run_id(std::move(id)), agent_name(std::move(agent)) {}
    ReadStores& reads;
    store::RunStore* store = nullptr;  // set by Start
    Executor& executor;
    const std::string run_id;  // as requested
    const std::string agent_name;
    bool record_export = false;
    ResultStreamer* reactor = nullptr;
    std::atomic<bool> cancelled{false};
    store::ResultExportIndex index;
    std::vector<ResultPage> pages;
    size_t next_page = 0;
    v1::ExportResultsResponse out;  // the message being written
  };
  static void Start(const std::shared_ptr<State>& state) {
    state->store = &state->reads.ForRun(state->run_id);
    absl::Status indexed = [&]() -> absl::Status {
      FLEETMARK_ASSIGN_OR_RETURN(const std::string run_id, state->store->ResolveRunId(state->run_id));
      FLEETMARK_ASSIGN_OR_RETURN(state->index, state->store->ListExportResults(run_id, state->agent_name));
      return absl::OkStatus();
    }();
    if (!indexed.ok()) {
      state->reactor->Finish(ToGrpcStatus(indexed));
      return;
    }
    state->pages = PageResults(state->index, kResultPageBytes);
    WriteNextPage(state);
  }
  static void WriteNextPage(const std::shared_ptr<State>& state) {
    if (state->cancelled) {
      state->reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "export cancelled"));
      return;
    }
    state->out.Clear();
    if (state->next_page == 0) SetHeader(state->index, &state->out);
    if (absl::Status loaded = LoadPage(*state->store, state->index, state->pages[state->next_page], &state->out);
        !loaded.ok()) {
      state->reactor->Finish(ToGrpcStatus(loaded));
      return;
    }
    ++state->next_page;
    if (state->next_page == state->pages.size() && state->record_export) {
      if (absl::Status recorded = state->reads.primary().RecordRunExported(state->index.run.run_id()); !recorded.ok()) {
        state->reactor->Finish(ToGrpcStatus(recorded));
        return;
      }
    }
    state->reactor->StartWrite(&state->out);
  }
  std::shared_ptr<State> state_;
};

}  // namespace

absl::Status ExportWholeRun(ReadStores& reads, const v1::ExportResultsRequest& request,
                            v1::ExportResultsResponse* response) {
  store::RunStore& store = reads.ForRun(request.run_id());
  FLEETMARK_ASSIGN_OR_RETURN(const std::string run_id, store.ResolveRunId(request.run_id()));
  FLEETMARK_ASSIGN_OR_RETURN(store::ResultExportIndex index, store.ListExportResults(run_id, request.agent_name()));
  // The answer's size from the index, before loading anything.
  SetHeader(index, response);
  size_t bytes = response->ByteSizeLong();
  for (const store::ResultExportIndex::Entry& entry : index.results) bytes += FieldBytes(entry.bytes);
  if (bytes > static_cast<size_t>(kCoordinatorMaxMessageBytes)) {
    response->Clear();
    return absl::ResourceExhaustedError(
        absl::StrCat("run ", run_id, ": its results take ", bytes, " bytes, over the ",
                     FormatMessageLimit(kCoordinatorMaxMessageBytes), " limit of one ExportResults answer (",
                     kCoordinatorMaxMessageBytes, " bytes); read them with StreamResults, as fleetmark export does"));
  }
  FLEETMARK_RETURN_IF_ERROR(LoadPage(store, index, {0, index.results.size()}, response));
  if (request.record_export() && request.agent_name().empty()) {
    FLEETMARK_RETURN_IF_ERROR(reads.primary().RecordRunExported(run_id));
  }
  return absl::OkStatus();
}

grpc::ServerWriteReactor<v1::ExportResultsResponse>* NewResultStreamer(ReadStores& reads, Executor& executor,
                                                                       const v1::ExportResultsRequest& request) {
  return new ResultStreamer(reads, executor, request.run_id(), request.agent_name(),
                            request.record_export() && request.agent_name().empty());
}

}  // namespace fleetmark::service
