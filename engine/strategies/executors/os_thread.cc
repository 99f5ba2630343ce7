#include "engine/strategies/executors/os_thread.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/topology/cpu_limits.h"

namespace fleetmark::engine {
namespace {

struct ThreadStart {
  std::function<void()> fn;
  std::string name;
};

void* ThreadMain(void* arg) {
  std::unique_ptr<ThreadStart> start(static_cast<ThreadStart*>(arg));
  if (!start->name.empty()) {
    pthread_setname_np(pthread_self(), start->name.substr(0, 15).c_str());
  }
  RunGuarded(start->fn, start->name.empty() ? "a thread" : start->name);
  return nullptr;
}

}  // namespace

absl::Status ValidateStackKib(int stack_kib, std::string_view field) {
  if (stack_kib == 0 || (stack_kib >= kMinStackKib && stack_kib <= kMaxStackKib)) {
    return absl::OkStatus();
  }
  const std::string f(field);
  return absl::InvalidArgumentError(absl::StrCat(f, ": 0 (system default) or ", kMinStackKib, " <= ", f,
                                                 " <= ", kMaxStackKib, " KiB, got ", stack_kib));
}

int LogicalCpuCount() { return EffectiveCpuCount(); }

OsThread::OsThread(OsThread&& other) noexcept
    : handle_(other.handle_), started_(std::exchange(other.started_, false)) {}

OsThread& OsThread::operator=(OsThread&& other) noexcept {
  if (this != &other) {
    Join();
    handle_ = other.handle_;
    started_ = std::exchange(other.started_, false);
  }
  return *this;
}

OsThread::~OsThread() { Join(); }

void OsThread::Join() {
  if (!started_) return;
  pthread_join(handle_, nullptr);
  started_ = false;
}

absl::StatusOr<OsThread> StartThread(int stack_kib, std::function<void()> fn, std::string_view name) {
  if (absl::Status s = ValidateStackKib(stack_kib); !s.ok()) return s;
  if (!fn) return absl::InvalidArgumentError("StartThread: empty function");

  pthread_attr_t attr;
  if (int rc = pthread_attr_init(&attr); rc != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("pthread_attr_init failed: ", std::strerror(rc)));
  }
  if (stack_kib > 0) {
    if (int rc = pthread_attr_setstacksize(&attr, static_cast<size_t>(stack_kib) * 1024); rc != 0) {
      pthread_attr_destroy(&attr);
      return absl::InvalidArgumentError(
          absl::StrCat("stack_kib: pthread_attr_setstacksize(", stack_kib, " KiB) failed: ", std::strerror(rc)));
    }
  }
  auto* start = new ThreadStart{std::move(fn), std::string(name)};
  OsThread thread;
  const int rc = pthread_create(&thread.handle_, &attr, &ThreadMain, start);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete start;
    const std::string what = absl::StrCat(
        "cannot create thread", name.empty() ? "" : " ", std::string(name), " (stack ",
        stack_kib == 0 ? std::string("default") : absl::StrCat(stack_kib, " KiB"), "): ", std::strerror(rc));
    if (rc == EAGAIN || rc == ENOMEM) return absl::ResourceExhaustedError(what);
    return absl::InternalError(what);
  }
  thread.started_ = true;
  return thread;
}

}  // namespace fleetmark::engine
