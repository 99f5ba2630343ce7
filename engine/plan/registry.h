// The names a plan may use: strategies, workloads, scenarios, io modes.
//
// This table is the single source of names: the engine's factories implement exactly
// these, and the coordinator validates plans against it without linking the engine's
// strategies (DESIGN.md, "Components").
#pragma once

#include <array>
#include <string_view>

namespace fleetmark::engine {

struct NameInfo {
  std::string_view name;
  std::string_view description;  // one line, for `fleetmark list`
};

struct StrategyNameInfo {
  std::string_view name;
  std::string_view description;
  bool suspending;  // has a suspending (non-blocking) wait
};

inline constexpr std::array<StrategyNameInfo, 11> kStrategies = {{
    {"direct", "call each task inline on the caller's thread", false},
    {"single_thread", "one worker thread with a FIFO queue", false},
    {"fixed_pool", "N threads sharing one FIFO queue (N = logical CPUs by default)", false},
    {"work_stealing", "N workers with per-worker deques and stealing (oneTBB task_arena)", false},
    {"limited", "a shared pool capped to N tasks in flight at once", false},
    {"elastic_pool", "cached pool: reuses idle threads, grows up to a cap (default 64)", false},
    {"thread_per_task", "a new OS thread for every task", false},
    {"async", "std::async(std::launch::async) per task", false},
    {"coroutine", "C++20 coroutines on Asio io_contexts run by N threads", true},
    {"fiber", "Boost.Fiber on N threads with the work-stealing scheduler", true},
    {"event_loop", "Asio io_contexts run by N threads, plain callbacks", true},
}};

inline constexpr std::array<NameInfo, 5> kWorkloads = {{
    {"arithmetic", "(float)i raised to the power (float)i, converted to int"},
    {"collections", "list 0..i-1, map to float +0.3, key by decimal string, square, keep > 5"},
    {"storage", "wait 500 + 10*i us (a small file or database access)"},
    {"network", "wait i ms (a remote call)"},
    {"mixed", "i%5==0 network, else i%3==0 storage, else i%2==0 collections, else arithmetic"},
}};

inline constexpr std::array<NameInfo, 4> kScenarios = {{
    {"batch", "wall time to run all n tasks and wait for all (study S1)"},
    {"memory", "resident memory vs live waiting tasks, KiB/task by least squares (study S2)"},
    {"fanout", "R requests each calling a dependency D times with delay and timeout (study S4)"},
    {"load", "closed-loop virtual users against an in-process HTTP server (study S3)"},
}};

inline constexpr std::array<std::string_view, 2> kIoModes = {"blocking", "suspending"};

}  // namespace fleetmark::engine
