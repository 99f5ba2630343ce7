// The parametric `synthetic` workload (plan.proto's SyntheticParams): task i computes
// for cpu_ns (a loop calibrated once per process), allocates and frees alloc_bytes,
// writes touch_kib of a per-thread buffer, then waits wait_us on average, drawn from
// a seeded distribution. Lets a sweep place the crossovers between strategies.
//
//   auto w = MakeSyntheticWorkload(params);   // calibrates on first use in the process
//   uint64_t sink = w->Compute(3);  absl::Duration d = w->Wait(3);
#pragma once

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "engine/workloads/workload.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::engine {

// ns per iteration of the synthetic computation loop in this process: the fastest of
// several timed trials (about 10 ms in all), measured on the first call and cached.
// Thread-safe; always > 0.
double SyntheticNsPerIteration();

// Runs `iterations` of the calibrated loop (a xorshift64 chain, no memory access) and
// returns its state, so the work cannot be dropped. Pure, thread-safe.
uint64_t SyntheticSpin(uint64_t iterations, uint64_t seed);

// The wait of task i: wait_us for "fixed" (or ""), uniform on [0, 2 wait_us],
// exponential or lognormal (sigma 1), each with mean wait_us; a pure function of
// (wait_seed, i), so every strategy and every process waits the same. An unknown
// distribution (refused by plan validation) waits wait_us.
absl::Duration SyntheticWait(const v1::SyntheticParams& params, int i);

// The synthetic workload with `params` (assumed validated: engine/scenarios/
// param_rules.h). Calibrates (SyntheticNsPerIteration) when cpu_ns > 0.
std::unique_ptr<Workload> MakeSyntheticWorkload(const v1::SyntheticParams& params);

}  // namespace fleetmark::engine
