// Human-readable tables of case results, the way the reference studies' charts read:
// per scenario × workload × io mode, strategies ranked by median with their 95% CI,
// ratio to the fastest, CPU time, allocations and status. Memory, fanout and load
// results get tables of their own columns.
//
//   std::cout << FormatTable(report);
#pragma once

#include <string>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

struct TableOptions {
  bool counters = true;  // CPU time and allocations columns of batch tables
};

// Returns the tables for all results of `report`, separated by blank lines, in the
// order the groups first appear. Batch groups ("batch · arithmetic · blocking"):
// OK rows sorted by median (then label), non-OK rows after them with the status and
// its message; columns
//   strategy | threads | median | 95% CI | ±% | ratio | CPU/rep | allocs/rep | status
// where times are auto-scaled (ns, µs, ms, s), ratio = median / fastest median of the
// group, CPU/rep = (user + system CPU) / repetitions, "!" marks throttled cases and
// "~" a CI that did not reach its target (stop reason not CI_TARGET).
// Memory groups: strategy, points (tasks:KiB over baseline), KiB/task slope, R²,
// ratio of slopes to the smallest. Fanout: total ms, successes/timeouts/failures,
// p50/p99 ms, peak threads. Load: users, req/s, mean/p50/p95/p99/p99.9 ms, errors,
// peak RSS. Pure, thread-safe.
std::string FormatTable(const fleetmark::v1::RunReport& report,
                        const TableOptions& options = {});

}  // namespace fleetmark::report
