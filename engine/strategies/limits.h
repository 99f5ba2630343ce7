// The ranges every strategy and executor enforces (docs/architecture.md, "Plans are bounded"), in
// one place: the plan validator (coordinator side), the scenarios' parameter checks,
// StrategyBase and the executors all use these. Header-only, dependency-free (target
// fleetmark_strategy_registry).
#pragma once

namespace fleetmark::engine {

// Threads a strategy or executor may create (StrategyOptions::threads and limit, a
// pool's size, a runner's carriers); 0 means "the default" where a field allows it.
inline constexpr int kMaxThreads = 10'000;

// Tasks of one batch (RunBatch's n, batch.tasks).
inline constexpr int kMaxBatchTasks = 1'000'000;

// Allowed `stack_kib` values: 0 (the system default, usually 8 MiB) or
// kMinStackKib..kMaxStackKib. The minimum is glibc's PTHREAD_STACK_MIN (16 KiB).
inline constexpr int kMinStackKib = 16;
inline constexpr int kMaxStackKib = 1 << 20;  // 1 GiB per thread/fibre

}  // namespace fleetmark::engine
