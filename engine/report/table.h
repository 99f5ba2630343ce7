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
  // Terminal columns to fit (0 = no limit, the full table: `--wide`, or output that
  // is not a terminal). When set, the status column wraps onto continuation lines
  // and, where a batch table is still too wide, its CPU/rep and allocs/rep columns are
  // left out with a note saying so.
  size_t max_width = 0;
  // Two or more unsupported cases of a table become one line under it naming their
  // strategies and the reason once (`runs show`, whose --wide gives the full table);
  // false: one row each.
  bool collapse_unsupported = false;
  // The agent the report belongs to ("" = none): named in the heading, before the
  // host's own fields (the OS host name is labelled "host name").
  std::string agent_name = {};
};

// The threads cell of every table, CLI and web alike: the threads the case used, with
// what the plan requested when that differs ("48 of 100" fewer, "7 (5 req.)" more: a
// fan-out's thread-per-request peak, a server model's threads), only the request
// ("100 req.") when nothing ran, "-" when neither is known.
std::string ThreadsText(const fleetmark::v1::CaseResult& result);
// The threads cell rule ThreadsText applies: "4 of 100" (fewer than requested), "7 (5
// req.)" (more), else the count. Pure.
std::string ThreadsCell(uint32_t used, uint32_t requested);

// CPU time (user + system) per timed repetition, auto-scaled like the medians
// ("2.40 µs", "1.50 ms"); "-" when nothing was measured or counted.
std::string CpuPerRepetitionText(const fleetmark::v1::CaseResult& result);

// The status cell's harness note for CaseResult.harness_share (the empty-task batch's
// wall time / the median): "[harness 12%]", or "[harness >= median]" from 100 % up —
// the empty batch then costs as much as the real one or more (the task's own work is
// below what the strategy's dispatch resolves), and a percentage above 100 would read as
// a share. Pure.
std::string HarnessNote(double harness_share);

// The n cell: samples kept (stats.count), as "97 of 1000" when transient_samples leading
// samples were dropped as a transient warm-up phase, else "97". Pure.
std::string SampleCountText(const fleetmark::v1::CaseResult& result);

// A memory case's slope is an answer when it was fitted on two or more points that ran,
// also when other points were left out (MemoryResult.left_out_tasks: e.g. 100 000
// threads resource exhausted); unsupported and cancelled cases have none.
bool HasMemorySlope(const fleetmark::v1::CaseResult& result);

// The KiB/task cell of every memory table, CLI and web alike: the RSS slope ("12.34"),
// naming the points left out of the fit ("12.34 (without 100000)"); "-" when
// HasMemorySlope is false.
std::string MemorySlopeText(const fleetmark::v1::CaseResult& result);

// Returns the tables for all results of `report`, in the order their groups first
// appear, under a heading with the plan, the agent (options.agent_name) and the host
// ("host name <hostname>"). A group holds the results sharing
// scenario, workload, io mode, scenario parameters and placement; its title reads
// e.g. "batch · arithmetic · blocking · n=100".
// Batch groups: OK rows sorted by median (then label), non-OK rows after them; columns
//   strategy | threads | median | 95% CI | ±% | n | ratio | CPU/rep | allocs/rep | status
// times auto-scaled (ns, µs, ms, s); ±% = CI half-width as % of the median ("-"
// when n < 6, where no 95% order-statistic CI exists); n = samples; ratio =
// median / fastest median of the group; CPU/rep = (user + system CPU) / repetitions;
// allocs/rep "n/a" when the counting operator new was not linked; status "ok", with
// "(rep cap)" / "(time cap)" when the CI target was not reached, "unsupported: <why>"
// etc. for non-OK cases, and "[throttled]" for flagged cases. When some row's energy
// was measured (CaseResult.energy, plan measurement.energy), J/task (net, ±% of the
// interval over processes, "unresolved" below the source's resolution, "[charging]")
// and W (mean power) come before CPU/rep; a plan whose energy is unavailable gets one
// "energy: unavailable (<why>)" line per distinct reason under the heading, never a 0.
// A legend follows.
// Unsupported cases (two or more in a table, with options.collapse_unsupported): one line
// under the table, "unsupported (3): a, b, c: <reason>", the reason being what their
// messages share once each strategy's own name is taken off.
// Memory groups: strategy, threads, stack (its source when reported), points
// (tasks:KiB over baseline), KiB/task RSS slope, +kstack (slope of RSS + kernel
// stacks), R², ratio of RSS slopes to the smallest. Fanout: total, ok/timeouts/
// failures, p50/p99, peak threads, ratio of totals, executor. Load: server threads,
// req/s (ranked descending), mean/p50/p95/p99/p99.9 latency, errors, peak RSS, load
// generator CPU %. Pure, thread-safe.
std::string FormatTable(const fleetmark::v1::RunReport& report, const TableOptions& options = {});

}  // namespace fleetmark::report
