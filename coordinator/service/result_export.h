// A run's results read back (ExportResults, StreamResults): the run and its hosts
// first, then its results. The unary export answers only runs that fit one message
// (engine/common/message_limits.h); the stream sends any run in pages of about
// kResultPageBytes, each loaded from the store only when the previous one was written.
// Reads go to the store ReadStores picks for the run (the replica when allowed); the
// export mark (Store::RecordRunExported) to the primary.
//
// Thread-safety: ExportWholeRun runs on the caller's thread (the executor's); a result
// streamer belongs to gRPC (it deletes itself in OnDone) and loads on the executor.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "coordinator/service/executor.h"
#include "coordinator/service/read_stores.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::service {

// A run's export cut into pages for StreamResults: [begin, end) ranges of
// `index.results`, each of at most `page_bytes` of serialized results (a single larger
// result alone). At least one page (empty for a run without results), so the first
// page always carries the run and its hosts.
struct ResultPage {
  size_t begin = 0, end = 0;
};
std::vector<ResultPage> PageResults(const store::ResultExportIndex& index, size_t page_bytes);

// ExportResults' work: the whole export of `request.run_id` (an id or a unique prefix)
// in `response`, marking the run exported when asked (record_export, every agent).
// NotFound / InvalidArgument from resolving the id; ResourceExhausted naming the size
// and the limit when the answer would exceed one message (nothing is loaded then).
absl::Status ExportWholeRun(ReadStores& reads, const v1::ExportResultsRequest& request,
                            v1::ExportResultsResponse* response);

// StreamResults' reactor for `request` (its run id or prefix resolved on the executor;
// errors end the stream with their code). `reads` and `executor` must outlive it.
grpc::ServerWriteReactor<v1::ExportResultsResponse>* NewResultStreamer(ReadStores& reads, Executor& executor,
                                                                       const v1::ExportResultsRequest& request);

}  // namespace fleetmark::service
