// The memory scenario (S2): resident memory against the number of live waiting tasks.
//
// Parent side (RunMemoryCase): for each task count N, checks that the point fits
// (threads, memory, the plan's cap), runs it in a fresh child process, then fits
// (RSS - baseline) against N by ordinary least squares (least_squares.h).
// Child side (MemoryPointChild): starts N tasks on the strategy that each touch
// `touch_stack_kib` of their stack and wait, blocked or suspended, until released;
// measures RSS/PSS/USS (smaps_rollup.h) once all N are waiting, plus the change of the
// system's kernel stacks (an OS thread's 16 KiB that RSS does not show); releases and
// joins them. The result has slopes of RSS, PSS, USS, kernel stacks and RSS + kernel
// stacks ("total"): compare threads with fibres on the total, since RSS alone omits a
// thread's kernel stack. KernelStack is system-wide and noisy: it counts only for a
// thread per task (thread_per_task, fixed_pool), with negative deltas taken as 0; the
// result's message flags such clamps, a negative RSS slope and fits of fewer than 3
// points (R^2 = 1 by construction).
//
// Strategies: thread_per_task (N OS threads) and fixed_pool (a pool of N threads,
// like S2's pooled threads) with blocking waits; fiber (N fibres), coroutine (N
// stackless C++20 coroutines on Asio) and event_loop (N pending Asio callbacks) with
// suspending waits. Other combinations are `unsupported` with the reason.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/scenarios/scenario.h"
#include "engine/strategies/registry.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Fills result->status/message/memory for `spec` (scenario "memory"). Returns an error
// only for an invalid spec (InvalidArgument naming the field); every failure of a
// point (resource exhausted, killed, timed out) is recorded in the result. Runs on the
// calling thread; spawns one child process at a time.
absl::Status RunMemoryCase(const v1::CaseSpec& spec, const ScenarioContext& ctx, v1::CaseResult* result);

// Fits memory->points(): the RSS, PSS, USS, kernel-stack and total slopes (KiB/task,
// least squares) over the points that ran (status ok); the task counts of the others
// go to memory->left_out_tasks (in point order), and the fit counts only what ran, so a
// 100 000-thread point that ran out of threads does not hide the slope of the rest.
// result->status is the first left-out point's status (ok when all ran; failed when
// fewer than two distinct N ran and nothing else explains it); result->message names
// each left-out point and the fit's caveats. `thread_per_task`: count kernel stacks
// (IsMemoryThreadPerTask). Pure; thread-safe on distinct results.
void FitMemoryPoints(bool thread_per_task, v1::MemoryResult* memory, v1::CaseResult* result);

// Child handler for kMemoryPointChildKind: request = serialized CaseSpec whose
// memory.task_counts holds exactly one N; response = serialized MemoryPoint (its status
// tells whether the N tasks could be started). InvalidArgument for a malformed request.
absl::StatusOr<std::string> MemoryPointChild(std::string_view request);

// The stack a task of `strategy` gets with plan value `stack_kib` (0 = default), in KiB,
// and a description of where it comes from. Thread-safe.
struct TaskStack {
  uint32_t kib = 0;  // 0 for stackless tasks (coroutine frames, callbacks)
  std::string source;
};
TaskStack DescribeTaskStack(std::string_view strategy, uint32_t stack_kib);

// True for the strategies that hold each waiting task on an OS thread of its own in
// this scenario (blocking waits only): thread-per-task, and a pool sized N per point.
bool IsMemoryThreadPerTask(const StrategyTraits& strategy);

}  // namespace fleetmark::engine
