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

// Returns the tables for all results of `report`, in the order their groups first
// appear, under a heading with the plan and host. A group holds the results sharing
// scenario, workload, io mode, scenario parameters and placement; its title reads
// e.g. "batch · arithmetic · blocking · n=100".
// Batch groups: OK rows sorted by median (then label), non-OK rows after them; columns
//   strategy | threads | median | 95% CI | ±% | n | ratio | CPU/rep | allocs/rep | status
// times auto-scaled (ns, µs, ms, s); ±% = CI half-width as % of the median ("-"
// when n < 6, where no 95% order-statistic CI exists); n = samples; ratio =
// median / fastest median of the group; CPU/rep = (user + system CPU) / repetitions;
// allocs/rep "n/a" when the counting operator new was not linked; status "ok", with
// "(rep cap)" / "(time cap)" when the CI target was not reached, "unsupported: <why>"
// etc. for non-OK cases, and "[throttled]" for flagged cases. A legend follows.
// Memory groups: strategy, threads, stack (its source when reported), points
// (tasks:KiB over baseline), KiB/task RSS slope, +kstack (slope of RSS + kernel
// stacks), R², ratio of RSS slopes to the smallest. Fanout: total, ok/timeouts/
// failures, p50/p99, peak threads, ratio of totals, executor. Load: server threads,
// req/s (ranked descending), mean/p50/p95/p99/p99.9 latency, errors, peak RSS, load
// generator CPU %. Pure, thread-safe.
std::string FormatTable(const fleetmark::v1::RunReport& report, const TableOptions& options = {});

}  // namespace fleetmark::report
