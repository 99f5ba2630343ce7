// The strategy registry: every strategy's name and traits, in one table.
//
// This table is the single source of what a strategy is. Code outside
// engine/strategies never compares a strategy name: it looks the entry up
// (FindStrategy) and asks its traits (carrier, suspending, ignores_threads, ...).
// Header-only and dependency-free (target fleetmark_strategy_registry), so the
// coordinator validates plans against it without linking the strategies.
// Adding a strategy: see engine/strategies/README.md.
//
//   const StrategyTraits* s = FindStrategy(spec.strategy().name());
//   if (s != nullptr && s->carrier == Carrier::kFiber) ...
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace fleetmark::engine {

// What a strategy's tasks run on (the executor the factories build for it).
enum class Carrier {
  kCaller,         // inline on the caller's thread (direct)
  kPool,           // a ThreadPool: N threads, one FIFO queue
  kWorkStealing,   // a oneTBB task_arena of N workers (WorkStealingArena)
  kLimited,        // a shared pool under a Limiter of N tasks in flight
  kElastic,        // an ElasticPool growing to N threads
  kThreadPerTask,  // a new OS thread per task
  kAsync,          // std::async(std::launch::async) per task
  kAsioCoroutine,  // C++20 coroutines on an AsioRunner of N io_contexts
  kAsioCallback,   // plain callbacks on an AsioRunner of N io_contexts
  kFiber,          // Boost.Fiber fibres on a FiberRunner of N threads
  kOpenMp,         // an OpenMP team of N threads (libgomp) forked by the strategy's own master thread
  kStdPar,         // std::for_each(std::execution::par) run inside a oneTBB task_arena of N workers
};

// How many of a batch's tasks can wait at once with blocking waits.
enum class Concurrency {
  kOne,      // one at a time (direct, single_thread)
  kPerTask,  // every task (a thread each)
  kThreads,  // `threads` of them (0 = a default known only on the host)
};

// What a strategy needs from the host's libraries, bit flags.
enum Needs : unsigned {
  kNeedsNothing = 0,
  kNeedsTbb = 1u << 0,             // oneTBB
  kNeedsIoContext = 1u << 1,       // Boost.Asio io_contexts
  kNeedsFiberScheduler = 1u << 2,  // Boost.Fiber (and Boost.Context stacks)
  kNeedsOpenMp = 1u << 3,          // an OpenMP runtime (libgomp; absent from builds without OpenMP)
};

struct StrategyTraits {
  std::string_view name;
  std::string_view description;  // one line, for `fleetmark list`
  Carrier carrier;
  bool suspending;       // has a suspending (non-blocking) wait
  bool ignores_threads;  // StrategyOptions::threads changes nothing (plans must leave it 0)
  int fixed_threads;     // ignores_threads: the threads it always creates (0 = none or per task)
  Concurrency concurrency;
  unsigned needs;  // Needs flags
};

inline constexpr std::array<StrategyTraits, 16> kStrategies = {{
    {"direct", "call each task inline on the caller's thread", Carrier::kCaller, false, true, 0, Concurrency::kOne,
     kNeedsNothing},
    {"single_thread", "one worker thread with a FIFO queue", Carrier::kPool, false, true, 1, Concurrency::kOne,
     kNeedsNothing},
    {"fixed_pool", "N threads sharing one FIFO queue (N = logical CPUs by default)", Carrier::kPool, false, false, 0,
     Concurrency::kThreads, kNeedsNothing},
    {"work_stealing", "N workers with per-worker deques and stealing (oneTBB task_arena)", Carrier::kWorkStealing,
     false, false, 0, Concurrency::kThreads, kNeedsTbb},
    {"limited", "a shared pool capped to N tasks in flight at once", Carrier::kLimited, false, false, 0,
     Concurrency::kThreads, kNeedsNothing},
    {"elastic_pool", "cached pool: reuses idle threads, grows up to a cap (default 64)", Carrier::kElastic, false,
     false, 0, Concurrency::kThreads, kNeedsNothing},
    {"thread_per_task", "a new OS thread for every task", Carrier::kThreadPerTask, false, true, 0,
     Concurrency::kPerTask, kNeedsNothing},
    {"async", "std::async(std::launch::async) per task", Carrier::kAsync, false, true, 0, Concurrency::kPerTask,
     kNeedsNothing},
    {"coroutine", "C++20 coroutines on Asio io_contexts run by N threads", Carrier::kAsioCoroutine, true, false, 0,
     Concurrency::kThreads, kNeedsIoContext},
    {"fiber", "Boost.Fiber on N threads with the work-stealing scheduler", Carrier::kFiber, true, false, 0,
     Concurrency::kThreads, kNeedsFiberScheduler},
    {"event_loop", "Asio io_contexts run by N threads, plain callbacks", Carrier::kAsioCallback, true, false, 0,
     Concurrency::kThreads, kNeedsIoContext},
    {"openmp_for", "OpenMP parallel for over the batch, schedule(static) (limit = chunk size)", Carrier::kOpenMp, false,
     false, 0, Concurrency::kThreads, kNeedsOpenMp},
    {"openmp_for_dynamic", "OpenMP parallel for over the batch, schedule(dynamic) (limit = chunk size)",
     Carrier::kOpenMp, false, false, 0, Concurrency::kThreads, kNeedsOpenMp},
    {"openmp_for_guided", "OpenMP parallel for over the batch, schedule(guided) (limit = chunk size)", Carrier::kOpenMp,
     false, false, 0, Concurrency::kThreads, kNeedsOpenMp},
    {"openmp_task", "one OpenMP task per task from a single producer, then taskwait", Carrier::kOpenMp, false, false, 0,
     Concurrency::kThreads, kNeedsOpenMp},
    {"std_par", "std::for_each(std::execution::par) over the batch (libstdc++ on oneTBB, N workers)", Carrier::kStdPar,
     false, false, 0, Concurrency::kThreads, kNeedsTbb},
}};

// The entry named `name`, or nullptr for an unknown name. Thread-safe (constant table).
constexpr const StrategyTraits* FindStrategy(std::string_view name) {
  for (const StrategyTraits& s : kStrategies) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// True for the Asio carriers (coroutine and callback tasks on io_contexts).
constexpr bool IsAsio(Carrier c) { return c == Carrier::kAsioCoroutine || c == Carrier::kAsioCallback; }

// The names of the entries for which `pred(traits)` holds, in registry order, as
// "a, b and c" (for messages such as "fanout supports a, b and c"). Thread-safe.
template <typename Pred>
std::string StrategyNames(Pred pred, std::string_view last_separator = " and ") {
  std::string out;
  std::string_view pending;
  for (const StrategyTraits& s : kStrategies) {
    if (!pred(s)) continue;
    if (!pending.empty()) {
      if (!out.empty()) out += ", ";
      out += pending;
    }
    pending = s.name;
  }
  if (!out.empty()) out += last_separator;
  out += pending;
  return out;
}

}  // namespace fleetmark::engine
