// openmp_for, openmp_for_dynamic, openmp_for_guided and openmp_task: OpenMP (GCC's
// libgomp). Each batch is one parallel region of `threads` threads (num_threads clause):
//  * openmp_for*: `#pragma omp for schedule(runtime)` over tasks 0..n-1, the schedule
//    (static, dynamic or guided, the registry row) and chunk (`limit`, 0 = OpenMP's
//    default chunk) set with omp_set_schedule on the master before the region;
//  * openmp_task: one thread of the team (`single`) creates one `omp task` per batch
//    task, then `taskwait`; the team's threads run the tasks.
//
// The region is forked by the strategy's own master thread (a one-thread ThreadPool),
// never by the RunBatch caller: the master is team thread 0 and runs tasks like the
// others, libgomp's worker pool belongs to it, and when Stop joins the master, libgomp's
// thread-exit destructor releases that pool (its workers exit; they are detached, so
// Stop waits for them by the thread count — see DoStop).
//
// Placement: libgomp reads OMP_PLACES / OMP_PROC_BIND once, when it loads, and has no
// API to change the places afterwards, so a per-case placement cannot be expressed
// through them. Every team thread instead runs on_thread_start (the placement hook:
// sched_setaffinity to the case's CPU set) the first time it enters one of this
// strategy's regions, before it runs a task — after any binding libgomp applied from
// the environment, so the placement wins. OpenMPImplementationNote states this.
//
// Threads used: omp_get_num_threads() inside each region (OpenMP may give fewer than
// asked, e.g. under OMP_THREAD_LIMIT), the largest seen. Dynamic adjustment is off
// (omp_set_dynamic(0) on the master). stack_kib is unsupported (libgomp sizes its
// threads' stacks from OMP_STACKSIZE at load time). Tasks block (io_mode suspending is
// unsupported). Built without OpenMP (-DFLEETMARK_OPENMP=OFF or a toolchain without
// it), every entry is unsupported with that reason.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <latch>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/thread_pool.h"
#include "engine/strategies/openmp_implementation.h"
#include "engine/strategies/strategy_base.h"

#if defined(FLEETMARK_HAVE_OPENMP)
#include <omp.h>
#endif

namespace fleetmark::engine {
namespace {

constexpr char kOpenMpUnsupported[] = "its tasks run on OpenMP team OS threads, which can only block";

enum class Construct { kForStatic, kForDynamic, kForGuided, kTask };

#if defined(FLEETMARK_HAVE_OPENMP)

// A different value per strategy instance, so a thread knows whether it has already
// announced itself (on_thread_start) to this instance.
std::atomic<uint64_t> next_instance{1};
thread_local uint64_t announced_to = 0;

class OpenMpStrategy final : public StrategyBase {
 public:
  OpenMpStrategy(std::string_view name, Construct construct)
      : StrategyBase(name, "fm-omp", kOpenMpUnsupported), construct_(construct) {}
  ~OpenMpStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions& options) override {
    if (options.stack_kib != 0) {
      return absl::UnimplementedError(absl::StrCat(std::string(name()),
                                                   ": stack_kib is not supported: libgomp sizes its threads' stacks "
                                                   "from OMP_STACKSIZE, read once when the library loads"));
    }
    if (options.limit != 0 && construct_ == Construct::kTask) {
      return absl::InvalidArgumentError(absl::StrCat(
          std::string(name()), ": limit (the chunk size of the openmp_for strategies) must be 0, got ", options.limit));
    }
    threads_ = options.threads > 0 ? options.threads : LogicalCpuCount();
    if (absl::Status s = master_.Start(1, thread_options()); !s.ok()) return s;
    // One empty region, untimed: libgomp creates the team's threads now and each
    // announces itself (on_thread_start).
    return OnMaster([this] {
      omp_set_dynamic(0);
#pragma omp parallel num_threads(threads_)
      EnterRegion();
    });
  }

  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    const Workload* w = &workload;
    if (construct_ == Construct::kTask) {
      return OnMaster([this, w, n] {
#pragma omp parallel num_threads(threads_) firstprivate(w, n)
        {
          EnterRegion();
#pragma omp single
          {
            for (int i = 0; i < n; ++i) {
#pragma omp task firstprivate(i, w)
              RunBlockingTask(*w, i);
            }
#pragma omp taskwait
          }
        }
      });
    }
    return OnMaster([this, w, n] {
      omp_set_schedule(ScheduleKind(), options().limit);  // chunk < 1 = the default chunk
#pragma omp parallel num_threads(threads_) firstprivate(w, n)
      {
        EnterRegion();
#pragma omp for schedule(runtime)
        for (int i = 0; i < n; ++i) RunBlockingTask(*w, i);
      }
    });
  }

  void DoStop() override {
    // Joining the master runs libgomp's thread-exit destructor, which tells the
    // master's pool threads to exit.
    master_.Stop();
  }

 private:
  omp_sched_t ScheduleKind() const {
    switch (construct_) {
      case Construct::kForDynamic:
        return omp_sched_dynamic;
      case Construct::kForGuided:
        return omp_sched_guided;
      case Construct::kForStatic:
      case Construct::kTask:
        break;
    }
    return omp_sched_static;
  }

  // Runs `body` on the master thread and waits for it.
  template <typename Body>
  absl::Status OnMaster(Body body) {
    std::latch done(1);
    absl::Status s = master_.Submit([&] {
      body();
      done.count_down();
    });
    if (!s.ok()) return s;
    done.wait();
    return absl::OkStatus();
  }

  // At the top of every region, on every team thread: the first entry of a worker
  // announces it (the master announced itself when the pool started it); the master
  // records the team's size.
  void EnterRegion() {
    if (omp_get_thread_num() == 0) {
      raise_threads_used(omp_get_num_threads());
      return;
    }
    if (announced_to != instance_) {
      announced_to = instance_;
      if (options().on_thread_start) {
        RunGuarded(options().on_thread_start, "on_thread_start");
      }
    }
  }

  const Construct construct_;
  const uint64_t instance_ = next_instance.fetch_add(1);
  int threads_ = 0;
  ThreadPool master_;
};

#else  // !FLEETMARK_HAVE_OPENMP

// This build has no OpenMP runtime: Start says so (the case status `unsupported`).
class OpenMpStrategy final : public StrategyBase {
 public:
  OpenMpStrategy(std::string_view name, Construct) : StrategyBase(name, "fm-omp", kOpenMpUnsupported) {}
  ~OpenMpStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions&) override {
    return absl::UnimplementedError(absl::StrCat(std::string(name()), ": unsupported: built without OpenMP"));
  }
  absl::Status DoRunBatch(const Workload&, int, IoMode) override {
    return absl::UnimplementedError(absl::StrCat(std::string(name()), ": unsupported: built without OpenMP"));
  }
  void DoStop() override {}
};

#endif

}  // namespace

std::unique_ptr<Strategy> NewOpenMpForStrategy() {
  return std::make_unique<OpenMpStrategy>("openmp_for", Construct::kForStatic);
}
std::unique_ptr<Strategy> NewOpenMpForDynamicStrategy() {
  return std::make_unique<OpenMpStrategy>("openmp_for_dynamic", Construct::kForDynamic);
}
std::unique_ptr<Strategy> NewOpenMpForGuidedStrategy() {
  return std::make_unique<OpenMpStrategy>("openmp_for_guided", Construct::kForGuided);
}
std::unique_ptr<Strategy> NewOpenMpTaskStrategy() {
  return std::make_unique<OpenMpStrategy>("openmp_task", Construct::kTask);
}

std::string OpenMpImplementationNote() {
#if defined(FLEETMARK_HAVE_OPENMP)
  const char* bind = std::getenv("OMP_PROC_BIND");
  const char* places = std::getenv("OMP_PLACES");
  return absl::StrCat("openmp_*: libgomp, OpenMP ", _OPENMP, " (", FLEETMARK_OPENMP_LINKAGE,
                      "); threads pinned by the case's placement at their first region (OMP_PROC_BIND=",
                      bind != nullptr ? bind : "unset", ", OMP_PLACES=", places != nullptr ? places : "unset",
                      ", read once at load)");
#else
  return "openmp_*: unsupported: built without OpenMP";
#endif
}

}  // namespace fleetmark::engine
