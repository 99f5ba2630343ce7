// In-process execution of one fanout case (the child process's side).
#include <utility>  // before Boost 1.74 asio/awaitable.hpp, which needs std::exchange
#include <algorithm>
#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/common/status_macros.h"
#include "engine/scenarios/executor_options.h"
#include "engine/measure/process_stats.h"
#include "engine/measure/thread_sampler.h"
#include "engine/scenarios/fanout_scenario.h"
#include "engine/scenarios/latency_histogram.h"
#include "engine/strategies/carrier.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/executors/fiber_runner.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/registry.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::engine {
namespace {

namespace asio = boost::asio;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

enum class CallOutcome { kSuccess, kTimeout, kFailure };

// Shared bookkeeping of one case: outcomes, per-request latencies, completion.
class Ledger {
 public:
  explicit Ledger(const FanoutConfig& config)
      : config_(config), latency_ns_(config.requests, 0), outcome_(config.requests), requests_left_(config.requests) {}

  const FanoutConfig& config() const { return config_; }

  // The call's wait: min(delay, timeout), and whether it timed out.
  std::pair<absl::Duration, CallOutcome> CallWait(uint32_t r, uint32_t j) const {
    const absl::Duration delay = FanoutCallDelay(config_, r, j);
    if (delay > config_.timeout) return {config_.timeout, CallOutcome::kTimeout};
    return {delay, CallOutcome::kSuccess};
  }

  void Start() { start_ = SteadyNow(); }  // durations on the monotonic clock: a wall step is no latency

  // Records one call of request r (any thread).
  void CallDone(uint32_t r, CallOutcome outcome) {
    calls_.fetch_add(1, std::memory_order_relaxed);
    if (outcome == CallOutcome::kTimeout) call_timeouts_.fetch_add(1, std::memory_order_relaxed);
    Worsen(r, outcome);
  }
  // Records that `count` calls of request r could not run, and why.
  void CallsFailed(uint32_t r, uint32_t count, const absl::Status& why) {
    failed_calls_.fetch_add(count, std::memory_order_relaxed);
    Worsen(r, CallOutcome::kFailure);
    absl::MutexLock lock(&mu_);
    if (first_failure_.ok()) first_failure_ = why;
  }
  // Request r has finished (each r exactly once, any thread).
  void RequestDone(uint32_t r) {
    latency_ns_[r] = absl::ToInt64Nanoseconds(SteadyNow() - start_);
    if (requests_left_.fetch_sub(1) == 1) {
      absl::MutexLock lock(&mu_);
      all_done_ = true;
    }
  }
  void WaitAll() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&all_done_));
    total_ = SteadyNow() - start_;
  }

  void Fill(v1::CaseResult* result) const {
    v1::FanoutResult* f = result->mutable_fanout();
    LatencyHistogram h;
    uint64_t ok = 0, timeouts = 0, failures = 0;
    for (uint32_t r = 0; r < config_.requests; ++r) {
      h.RecordNanos(static_cast<uint64_t>(latency_ns_[r]));
      switch (static_cast<CallOutcome>(outcome_[r].load())) {
        case CallOutcome::kSuccess:
          ++ok;
          break;
        case CallOutcome::kTimeout:
          ++timeouts;
          break;
        case CallOutcome::kFailure:
          ++failures;
          break;
      }
    }
    f->set_total_ms(absl::ToDoubleMilliseconds(total_));
    f->set_successes(ok);
    f->set_timeouts(timeouts);
    f->set_failures(failures);
    f->set_latency_mean_ms(absl::ToDoubleMilliseconds(h.Mean()));
    f->set_latency_p50_ms(absl::ToDoubleMilliseconds(h.Percentile(50)));
    f->set_latency_p95_ms(absl::ToDoubleMilliseconds(h.Percentile(95)));
    f->set_latency_p99_ms(absl::ToDoubleMilliseconds(h.Percentile(99)));
    f->set_latency_max_ms(absl::ToDoubleMilliseconds(h.Max()));
    f->set_calls(calls_.load() + failed_calls_.load());
    f->set_call_timeouts(call_timeouts_.load());
  }

  absl::Status first_failure() const {
    absl::MutexLock lock(&mu_);
    return first_failure_;
  }

 private:
  void Worsen(uint32_t r, CallOutcome outcome) {
    int current = outcome_[r].load();
    while (current < static_cast<int>(outcome) &&
           !outcome_[r].compare_exchange_weak(current, static_cast<int>(outcome))) {
    }
  }

  FanoutConfig config_;
  std::vector<int64_t> latency_ns_;        // slot r written once by request r
  std::vector<std::atomic<int>> outcome_;  // worst CallOutcome of request r
  std::atomic<uint32_t> requests_left_;
  std::atomic<uint64_t> calls_{0}, call_timeouts_{0}, failed_calls_{0};
  absl::Time start_;
  absl::Duration total_;
  mutable absl::Mutex mu_;
  bool all_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status first_failure_ ABSL_GUARDED_BY(mu_);
};

void BlockingCall(Ledger& ledger, uint32_t r, uint32_t j) {
  auto [wait, outcome] = ledger.CallWait(r, j);
  std::this_thread::sleep_for(absl::ToChronoNanoseconds(wait));
  ledger.CallDone(r, outcome);
}

// ---- thread-carried requests: direct, fixed_pool, work_stealing, thread_per_task ----

// Runs request r's D calls from its own thread, through the strategy's carrier.
class ThreadRequests {
 public:
  ThreadRequests(Ledger& ledger, const StrategyTraits& strategy, int threads, uint32_t stack_kib)
      : ledger_(ledger), strategy_(strategy), threads_(threads), stack_kib_(stack_kib) {}

  // One executor for every request: a shared pool of `threads` (kPool with threads
  // set), or a oneTBB arena of k slots (kWorkStealing). kPool with threads 0 starts a
  // pool of D per request instead (as S4 did).
  absl::Status Prepare() {
    const bool shared_pool = strategy_.carrier == Carrier::kPool && threads_ > 0;
    if (!shared_pool && strategy_.carrier != Carrier::kWorkStealing) return absl::OkStatus();
    const int k = threads_ > 0 ? threads_ : LogicalCpuCount();
    absl::StatusOr<std::unique_ptr<StrategyCarrier>> carrier =
        StartCarrier(strategy_, k, ScenarioThreadOptions(stack_kib_));
    if (!carrier.ok()) return carrier.status();
    shared_ = *std::move(carrier);
    return absl::OkStatus();
  }

  std::string Describe() const {
    const uint32_t d = ledger_.config().calls;
    switch (strategy_.carrier) {
      case Carrier::kCaller:
        return "one OS thread per request, calls in sequence";
      case Carrier::kPool:
        if (shared_ == nullptr) {
          return absl::StrCat("one OS thread per request with its own pool of D = ", d, " threads");
        }
        return absl::StrCat("one OS thread per request, calls on a shared pool of ", threads_, " threads");
      case Carrier::kWorkStealing:
        return absl::StrCat("one OS thread per request, calls on a oneTBB arena of ", shared_->threads(), " workers");
      default:
        return "one OS thread per request and one per call";
    }
  }

  void IssueAll() {
    const uint32_t requests = ledger_.config().requests;
    request_threads_.reserve(requests);
    for (uint32_t r = 0; r < requests; ++r) {
      absl::StatusOr<OsThread> t = StartThread(static_cast<int>(stack_kib_), [this, r] { Request(r); });
      if (t.ok()) {
        request_threads_.push_back(*std::move(t));
      } else {
        ledger_.CallsFailed(r, ledger_.config().calls, t.status());
        ledger_.RequestDone(r);
      }
    }
  }

  void Finish() {
    for (OsThread& t : request_threads_) t.Join();
    request_threads_.clear();
    if (shared_ != nullptr) shared_->Stop();
  }

 private:
  void Request(uint32_t r) {
    const uint32_t d = ledger_.config().calls;
    if (strategy_.carrier == Carrier::kCaller) {
      for (uint32_t j = 0; j < d; ++j) BlockingCall(ledger_, r, j);
    } else if (strategy_.carrier == Carrier::kThreadPerTask) {
      std::vector<OsThread> calls;
      calls.reserve(d);
      for (uint32_t j = 0; j < d; ++j) {
        absl::StatusOr<OsThread> t =
            StartThread(static_cast<int>(stack_kib_), [this, r, j] { BlockingCall(ledger_, r, j); });
        if (!t.ok()) {
          ledger_.CallsFailed(r, d - j, t.status());
          break;
        }
        calls.push_back(*std::move(t));
      }
      for (OsThread& t : calls) t.Join();
    } else {
      SubmitAndWait(r, d);
    }
    ledger_.RequestDone(r);
  }

  // Pool and work-stealing carriers: D calls on an executor, joined by a latch.
  void SubmitAndWait(uint32_t r, uint32_t d) {
    std::latch done(d);
    auto call = [this, r, &done](uint32_t j) {
      BlockingCall(ledger_, r, j);
      done.count_down();
    };
    std::unique_ptr<StrategyCarrier> own;
    if (shared_ == nullptr) {
      absl::StatusOr<std::unique_ptr<StrategyCarrier>> started =
          StartCarrier(strategy_, static_cast<int>(d), ScenarioThreadOptions(stack_kib_));
      if (!started.ok()) {
        ledger_.CallsFailed(r, d, started.status());
        return;
      }
      own = *std::move(started);
    }
    Executor& executor = own != nullptr ? own->executor() : shared_->executor();
    for (uint32_t j = 0; j < d; ++j) {
      absl::Status submitted = executor.Submit([call, j] { call(j); });
      if (!submitted.ok()) {
        ledger_.CallsFailed(r, d - j, submitted);
        done.count_down(d - j);
        break;
      }
    }
    done.wait();
    if (own != nullptr) own->Stop();
  }

  Ledger& ledger_;
  const StrategyTraits& strategy_;
  int threads_;
  uint32_t stack_kib_;
  std::unique_ptr<StrategyCarrier> shared_;  // see Prepare
  std::vector<OsThread> request_threads_;
};

// ---- fibres ----

// A count-down latch for fibres (suspends the fibre, not its thread).
class FiberLatch {
 public:
  explicit FiberLatch(uint32_t count) : count_(count) {}
  void CountDown() {
    std::lock_guard<boost::fibers::mutex> lock(mu_);
    if (--count_ == 0) cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<boost::fibers::mutex> lock(mu_);
    cv_.wait(lock, [this] { return count_ == 0; });
  }

 private:
  boost::fibers::mutex mu_;
  boost::fibers::condition_variable cv_;
  uint32_t count_;  // guarded by mu_
};

absl::Status RunFibres(Ledger& ledger, FiberRunner& runner, bool suspending) {
  const uint32_t d = ledger.config().calls;
  return runner.Launch(static_cast<int>(ledger.config().requests), [&ledger, &runner, d, suspending](int request) {
    const uint32_t r = static_cast<uint32_t>(request);
    auto latch = std::make_shared<FiberLatch>(d);
    absl::Status launched = runner.Launch(static_cast<int>(d), [&ledger, r, latch, suspending](int j) {
      auto [wait, outcome] = ledger.CallWait(r, static_cast<uint32_t>(j));
      if (suspending) {
        boost::this_fiber::sleep_for(absl::ToChronoNanoseconds(wait));
      } else {
        std::this_thread::sleep_for(absl::ToChronoNanoseconds(wait));
      }
      ledger.CallDone(r, outcome);
      latch->CountDown();
    });
    if (!launched.ok()) {
      ledger.CallsFailed(r, d, launched);
    } else {
      latch->Wait();
    }
    ledger.RequestDone(r);
  });
}

// ---- Asio: coroutines and callbacks ----

// Join of one request's calls: the last call to finish cancels `done`, posted to the
// request's io_context (run by one thread, so it cannot race the request's wait).
struct AsioJoin {
  AsioJoin(asio::io_context& ctx, uint32_t calls) : done(ctx, asio::steady_timer::time_point::max()), left(calls) {}
  asio::steady_timer done;
  std::atomic<uint32_t> left;
};

void CallFinished(const std::shared_ptr<AsioJoin>& join) {
  if (join->left.fetch_sub(1) == 1) {
    asio::post(join->done.get_executor(), [join] { join->done.cancel(); });
  }
}

asio::awaitable<void> CoroutineCall(Ledger& ledger, uint32_t r, uint32_t j, bool suspending,
                                    std::shared_ptr<AsioJoin> join) {
  auto [wait, outcome] = ledger.CallWait(r, j);
  if (suspending) {
    asio::steady_timer timer(co_await asio::this_coro::executor, absl::ToChronoNanoseconds(wait));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  } else {
    std::this_thread::sleep_for(absl::ToChronoNanoseconds(wait));
  }
  ledger.CallDone(r, outcome);
  CallFinished(join);
}

asio::awaitable<void> CoroutineRequest(Ledger& ledger, AsioRunner& runner, uint32_t r, bool suspending) {
  const uint32_t d = ledger.config().calls;
  asio::io_context& own = runner.context(static_cast<int>(r % runner.size()));
  auto join = std::make_shared<AsioJoin>(own, d);
  for (uint32_t j = 0; j < d; ++j) {
    asio::co_spawn(runner.Next(), CoroutineCall(ledger, r, j, suspending, join), asio::detached);
  }
  if (join->left.load() > 0) {
    boost::system::error_code ec;
    co_await join->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  ledger.RequestDone(r);
}

void CallbackRequest(Ledger& ledger, AsioRunner& runner, uint32_t r, bool suspending) {
  const uint32_t d = ledger.config().calls;
  auto left = std::make_shared<std::atomic<uint32_t>>(d);
  for (uint32_t j = 0; j < d; ++j) {
    asio::io_context& ctx = runner.Next();
    auto [wait, outcome] = ledger.CallWait(r, j);
    auto finished = [&ledger, r, outcome = outcome, left] {
      ledger.CallDone(r, outcome);
      if (left->fetch_sub(1) == 1) ledger.RequestDone(r);
    };
    if (suspending) {
      auto timer = std::make_shared<asio::steady_timer>(ctx, absl::ToChronoNanoseconds(wait));
      timer->async_wait([timer, finished](const boost::system::error_code&) { finished(); });
    } else {
      asio::post(ctx, [wait = wait, finished] {
        std::this_thread::sleep_for(absl::ToChronoNanoseconds(wait));
        finished();
      });
    }
  }
}

bool FanoutSupports(const StrategyTraits& s) {
  return IsFanoutThreadCarried(s) || s.carrier == Carrier::kFiber || IsAsio(s.carrier);
}

}  // namespace

bool IsFanoutThreadCarried(const StrategyTraits& s) {
  return s.carrier == Carrier::kCaller || s.carrier == Carrier::kWorkStealing || s.carrier == Carrier::kThreadPerTask ||
         (s.carrier == Carrier::kPool && !s.ignores_threads);
}

absl::Duration FanoutCallDelay(const FanoutConfig& config, uint32_t request, uint32_t call) {
  if (!config.random_delay) return config.delay;
  const uint64_t max_us = static_cast<uint64_t>(absl::ToInt64Microseconds(config.delay));
  const uint64_t bits = SplitMix64(SplitMix64(config.seed ^ SplitMix64(request)) ^ (uint64_t{call} << 1));
  return absl::Microseconds(static_cast<int64_t>(bits % (max_us + 1)));
}

absl::Status RunFanoutInProcess(const v1::CaseSpec& spec, v1::CaseResult* result) {
  FLEETMARK_ASSIGN_OR_RETURN(FanoutConfig config, ResolveFanoutConfig(spec));
  const std::string& name = spec.strategy().name();
  const bool suspending = spec.io_mode() == "suspending";
  const StrategyTraits* strategy = FindStrategy(name);
  if (strategy == nullptr || !FanoutSupports(*strategy)) {
    result->set_status(v1::CASE_STATUS_UNSUPPORTED);
    result->set_message(absl::StrCat("fanout supports ", StrategyNames(FanoutSupports), "; got ", name));
    return absl::OkStatus();
  }
  const bool thread_carried = IsFanoutThreadCarried(*strategy);
  if (thread_carried && suspending) {
    result->set_status(v1::CASE_STATUS_UNSUPPORTED);
    result->set_message(absl::StrCat(name, " has no suspending wait: its calls block an OS thread"));
    return absl::OkStatus();
  }
  const int carriers = config.threads > 0 ? config.threads : LogicalCpuCount();

  PeakThreadSampler sampler;
  const bool sampling = sampler.Start().ok();
  const bool peak_reset = ResetPeakRss().ok();
  Ledger ledger(config);
  std::string executor;
  absl::Status setup;

  std::unique_ptr<ThreadRequests> thread_requests;
  std::unique_ptr<StrategyCarrier> carrier;
  if (thread_carried) {
    thread_requests = std::make_unique<ThreadRequests>(ledger, *strategy, config.threads, config.stack_kib);
    setup = thread_requests->Prepare();
    if (setup.ok()) {
      executor = thread_requests->Describe();
      ledger.Start();
      thread_requests->IssueAll();
      ledger.WaitAll();
    }
    thread_requests->Finish();
    result->set_threads_used(static_cast<uint32_t>(sampling ? sampler.peak_threads() : 0));
  } else if (strategy->carrier == Carrier::kFiber) {
    absl::StatusOr<std::unique_ptr<StrategyCarrier>> started =
        StartCarrier(*strategy, carriers, ScenarioThreadOptions(config.stack_kib));
    setup = started.status();
    if (setup.ok()) {
      carrier = *std::move(started);
      executor = absl::StrCat("fibres on ", carriers, " threads (",
                              suspending ? "this_fiber::sleep_for" : "blocking sleep", ")");
      ledger.Start();
      setup = RunFibres(ledger, *carrier->fibres(), suspending);
      if (setup.ok()) ledger.WaitAll();
      carrier->Stop();
    }
    result->set_threads_used(static_cast<uint32_t>(carriers));
  } else {
    absl::StatusOr<std::unique_ptr<StrategyCarrier>> started = StartCarrier(*strategy, carriers);
    setup = started.status();
    if (setup.ok()) {
      carrier = *std::move(started);
      AsioRunner& asio_runner = *carrier->asio();
      const bool coroutines = strategy->carrier == Carrier::kAsioCoroutine;
      executor = absl::StrCat(coroutines ? "C++20 coroutines" : "callbacks", " on ", carriers, " io_contexts (",
                              suspending ? "steady_timer" : "blocking sleep", ")");
      ledger.Start();
      for (uint32_t r = 0; r < config.requests; ++r) {
        asio::io_context& ctx = asio_runner.context(static_cast<int>(r % asio_runner.size()));
        if (coroutines) {
          asio::co_spawn(ctx, CoroutineRequest(ledger, asio_runner, r, suspending), asio::detached);
        } else {
          asio::post(ctx,
                     [&ledger, &asio_runner, r, suspending] { CallbackRequest(ledger, asio_runner, r, suspending); });
        }
      }
      ledger.WaitAll();
      carrier->Stop();
    }
    result->set_threads_used(static_cast<uint32_t>(carriers));
  }
  sampler.Stop();

  if (!setup.ok()) {
    result->set_status(absl::IsResourceExhausted(setup) ? v1::CASE_STATUS_RESOURCE_EXHAUSTED : v1::CASE_STATUS_FAILED);
    result->set_message(absl::StrCat("starting ", name, ": ", setup.message()));
    return absl::OkStatus();
  }
  ledger.Fill(result);
  v1::FanoutResult* f = result->mutable_fanout();
  f->set_executor(executor);
  if (sampling) {
    f->set_peak_threads(static_cast<uint32_t>(sampler.peak_threads()));
    result->mutable_counters()->set_peak_threads(static_cast<uint32_t>(sampler.peak_threads()));
  }
  if (absl::StatusOr<ProcessStatus> status = ReadProcessStatus(); status.ok()) {
    f->set_peak_rss_bytes(status->peak_rss_bytes);
  }
  const absl::Status failure = ledger.first_failure();
  if (!failure.ok()) {
    result->set_status(absl::IsResourceExhausted(failure) ? v1::CASE_STATUS_RESOURCE_EXHAUSTED
                                                          : v1::CASE_STATUS_FAILED);
    result->set_message(
        absl::StrCat(f->failures(), " of ", config.requests, " requests failed; first: ", failure.message()));
  } else {
    result->set_status(v1::CASE_STATUS_OK);
    if (!peak_reset) result->set_message("peak RSS is the child's peak since its start");
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::engine
