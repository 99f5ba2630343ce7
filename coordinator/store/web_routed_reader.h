// A WebReader that answers from a streaming replica while the ReadRouter says so
// (read_router.h), else from the primary, so the web view's queries stay off the
// primary without showing a submitter stale data:
//   - a replica that fails a read (Unavailable) is reported to the router and the read
//     is answered by the primary;
//   - a by-id read the replica cannot answer yet (a run, result or prefix it does not
//     hold, or a run it holds as not finished) is read again from the primary, so a
//     run just submitted, and its live progress, show at once (read-your-writes);
//   - lists (agents, runs, schedules, history) come from the replica as it is: at
//     most --read_max_lag old.
//
//   auto reader = MakeRoutedWebReader(std::move(primary), std::move(replica), router);
//
// Thread-safety: as WebReader (both readers and the router must be thread-safe). The
// router must outlive the reader.
#pragma once

#include <memory>

#include "coordinator/store/read_router.h"
#include "coordinator/store/web_reader.h"

namespace fleetmark::store {

std::unique_ptr<WebReader> MakeRoutedWebReader(std::unique_ptr<WebReader> primary, std::unique_ptr<WebReader> replica,
                                               ReadRouter& router);

}  // namespace fleetmark::store
