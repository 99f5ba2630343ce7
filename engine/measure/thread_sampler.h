// A background sampler of the process's thread count, for the peak-threads counter
// of a case (short-lived threads, e.g. thread_per_task's, exist only between samples
// of a plain before/after reading).
//
//   PeakThreadSampler sampler;  // every 2 ms
//   FLEETMARK_RETURN_IF_ERROR(sampler.Start());
//   RunRepetitions();
//   sampler.Stop();
//   counters.set_peak_threads(sampler.peak_threads());
//
// Cost: the sampler is one extra thread that wakes every `period` (default 2 ms) and
// reads /proc/self/stat with one pread() on a descriptor opened at Start. Measured on
// the project's 2-core VM under load (average 11): ~33 µs of system CPU and one
// voluntary context switch per sample, wake-up included, i.e. ~1.6% of one core at
// 2 ms; it sleeps in between and never spins. Its own thread is excluded from the
// count, and its own CPU time and context switches are available (own_usage) so
// callers can subtract them from RUSAGE_SELF deltas (CounterCollector does). Threads
// that live for less than the period can be missed: the peak is a lower bound.
// Samples are also taken at Start and Stop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "engine/measure/process_stats.h"

namespace fleetmark::engine {

inline constexpr absl::Duration kDefaultThreadSamplePeriod = absl::Milliseconds(2);

class PeakThreadSampler {
 public:
  // `period` is clamped to [100 µs, 1 s].
  explicit PeakThreadSampler(absl::Duration period = kDefaultThreadSamplePeriod);
  ~PeakThreadSampler();  // Stops.
  PeakThreadSampler(const PeakThreadSampler&) = delete;
  PeakThreadSampler& operator=(const PeakThreadSampler&) = delete;

  // Opens /proc/self/stat, takes a first sample and starts the sampling thread.
  // FailedPrecondition if already running; NotFound if /proc/self/stat is missing;
  // ResourceExhausted if the thread cannot be created. Call from one thread.
  absl::Status Start();
  // Takes a last sample, stops and joins the sampling thread. Idempotent.
  void Stop();

  // Peak thread count seen since Start, excluding the sampler's own thread.
  // Thread-safe; valid while running and after Stop.
  int64_t peak_threads() const { return peak_.load(std::memory_order_relaxed); }
  // Number of samples taken since Start. Thread-safe.
  int64_t samples() const { return samples_.load(std::memory_order_relaxed); }
  // CPU time and context switches of the sampler thread itself (valid after Stop).
  const ResourceUsage& own_usage() const { return own_usage_; }

 private:
  void Sample(bool own_thread_alive);
  void Loop();

  absl::Duration period_;
  int stat_fd_ = -1;
  bool status_file_ = false;  // stat_fd_ is /proc/self/status (qemu-user), not stat
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> samples_{0};
  ResourceUsage own_usage_;
  // std, not absl (docs/contributing.md, the mutex convention's exceptions): the period
  // is a wait on the monotonic clock (Abseil's timed waits sleep on CLOCK_REALTIME), and
  // AwaitSteady's alarm thread would be one more thread in the count this sampler takes.
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace fleetmark::engine
