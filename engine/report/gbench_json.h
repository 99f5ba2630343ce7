// Export in Google Benchmark's JSON output format (as written by
// `--benchmark_format=json` of benchmark 1.7), so its tools, notably
// tools/compare.py (Debian: /usr/share/benchmark/compare.py), compare two fleetmark
// exports the way they compare two benchmark binaries.
//
// Mapping: one benchmark family per OK batch case, named by its case_id (e.g.
// "batch/arithmetic/blocking/fixed_pool/any"); each raw sample becomes a run_type
// "iteration" entry (iterations = 1, repetition_index = sample index, real_time = the
// sample, cpu_time = that repetition's process CPU time (CaseResult.cpu_samples_ns);
// a result without per-repetition CPU times has no iteration entries, only the
// aggregates, so compare.py cannot run its U test on one value copied n times),
// followed by "aggregate" entries mean, median, stddev
// and cv like benchmark's own --benchmark_repetitions output. Non-OK cases and
// results without samples (memory, fanout, load) are one "iteration" entry each with
// Google Benchmark's error fields (error_occurred: true, error_message: "<status>:
// <message>"; iterations and times 0), as benchmark writes for SkipWithError, so no
// case is silently missing; compare.py still compares the others. Context: date, host_name, executable, num_cpus (the
// logical CPUs the process may use: min(allowed, ceil(CPU quota)); fleetmark_allowed_cpus, fleetmark_machine_cpus and
// fleetmark_cpu_quota beside it), mhz_per_cpu (max core frequency), cpu_scaling_enabled (governor is not
// "performance"), caches, load_avg, library_build_type, fleetmark_emulated (true when the host or any result ran under
// user-mode emulation) with fleetmark_emulation_evidence. Every entry of an emulated
// result (CaseResult.emulated) has "label": "emulated" and "fleetmark_emulated": true.
#pragma once

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

struct GbenchOptions {
  absl::Time now = absl::Now();  // context "date" (RFC 3339, UTC); tests fix it
  std::string executable = "fleetmark";
  bool per_sample_entries = true;  // false: only the aggregates
  // Time unit of every entry: "ns", "us", "ms" or "s" (anything else: "ns"). One unit
  // for all cases, because compare.py pairs entries only when their units match.
  std::string time_unit = "ns";
};

// Returns the JSON document (pretty-printed, UTF-8). Pure, thread-safe.
std::string FormatGbenchJson(const fleetmark::v1::RunReport& report, const GbenchOptions& options = {});

}  // namespace fleetmark::report
