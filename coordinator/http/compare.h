// Side-by-side comparison of devices (the Compare page): for each strategy × workload
// cell, each device's median normalised to that device's fastest strategy for the
// workload, the winning device, the ratio of medians A/X with an interval, and a
// geometric-mean summary per workload and overall.
//
//   std::vector<DeviceResults> devices = ...;       // device 0 is "A"
//   Comparison c = CompareDevices(devices);
//
// Ratio interval (shown): [low_A / high_X, high_A / low_X] from the two medians' 95% CIs
// (interval arithmetic on independent CIs: conservative, at least ~90% coverage by
// Bonferroni). The winning device of a cell is the one verdict rule's
// (engine/measure/verdict.h, DecideGroup over the devices' process medians, the i-th
// process of each device taken as round i + 1: devices do not share rounds, so this
// pairs independent processes, which the interval covers as a two-sample comparison);
// "no difference" is every cell without a decided winner. Geometric means of ratios and of their bounds follow Fleming
// & Wallace (1986), "How not to lie with statistics: the correct way to summarize benchmark results". Pure functions,
// thread-safe.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/web_reader.h"
#include "engine/report/strategy_map.h"

namespace fleetmark::http {

struct DeviceResults {
  std::string agent_id;
  std::string name;
  std::string run_id;
  // The agent's host identity (coordinator/scheduler/same_host.h; "" = unknown).
  std::string machine_id;
  std::string boot_id;
  std::vector<store::WebResult> results;  // only OK results with samples are used
  // The agent runs under user-mode emulation, or some of `results` were measured so.
  bool emulated = false;
  // Results measured under emulation that were left out (the API's default).
  int emulated_left_out = 0;
  // The fingerprint most of `results` were measured under (hash "" = unknown) and how
  // many different ones they carry (engine::PrevailingFingerprint).
  fleetmark::v1::DeviceFingerprint fingerprint;
  int fingerprints = 0;
};

struct CellValue {
  std::string result_id;
  double median_ns = 0;
  double ci_low_ns = 0;
  double ci_high_ns = 0;
  double normalized = 1;                   // median / this device's fastest median in the workload (>= 1)
  bool fastest = false;                    // this device's fastest strategy in the workload
  std::vector<double> process_medians_ns;  // report::EntryOf: one per process
  bool contended = false;                  // measured while other work used the device
  double other_cpu_share = 0;              // other processes' share of its CPU then (0..1)
  engine::WaitEpisodes episodes;           // report::MapEntry's: the second contention bound
  double wakeup_delay_ns = 0;
  double preemption_delay_ns = 0;

  // Whether the value has a confidence interval (0 < low <= high, finite): without one
  // the ranking treats it as [0, ∞) and the JSON gives both bounds as null.
  bool has_ci() const { return ci_low_ns > 0 && std::isfinite(ci_high_ns) && ci_high_ns >= ci_low_ns; }
};

struct Ratio {
  double ratio = 1;  // median_A / median_X
  double low = 1;
  double high = 1;
  bool no_difference = false;  // low <= 1 <= high
};

struct Cell {
  std::string strategy;
  std::string workload;                          // WorkloadColumn::key
  std::vector<std::optional<CellValue>> values;  // one per device
  int winner = -1;                               // index of the fastest device; -1 if < 2 devices have it
  bool no_difference = false;                    // no decided winner (equivalent, undecided, provisional)
  std::string verdict;                           // the verdict's kind ("decided", "undecided", ...)
  std::string reason;                            // and its reason; "" with fewer than 2 devices
  std::vector<std::optional<Ratio>> ratios;      // [i] = A / device i (i >= 1); [0] empty
};

struct WorkloadColumn {
  std::string key;    // "<scenario>/<workload>/<io_mode>/<placement>"
  std::string label;  // e.g. "storage (suspending)"
};

struct Comparison {
  std::vector<WorkloadColumn> workloads;  // in first-seen order of device A, then others
  std::vector<std::string> strategies;    // by geometric mean of normalised time, fastest first
  std::vector<Cell> cells;
  // Per workload column: geometric mean over its cells of A / device i.
  std::vector<std::pair<std::string, std::vector<std::optional<Ratio>>>> geomean;
  // Over every cell with both values.
  std::vector<std::optional<Ratio>> overall;
};

// `winner` / `no_difference` of each cell follow the one verdict rule (DecidePoint with
// options; options.spread 0 = the spread of every device's results, report::SpreadOf).
Comparison CompareDevices(const std::vector<DeviceResults>& devices, const report::MapOptions& options = {});

// The column key / label of a result's case.
std::string WorkloadKey(const fleetmark::v1::CaseSpec& spec);
std::string WorkloadLabel(const fleetmark::v1::CaseSpec& spec);
// The strategy's display label (spec label, else name).
std::string StrategyLabel(const fleetmark::v1::CaseSpec& spec);

}  // namespace fleetmark::http
