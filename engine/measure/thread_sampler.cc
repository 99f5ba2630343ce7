#include "engine/measure/thread_sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace fleetmark::engine {

PeakThreadSampler::PeakThreadSampler(absl::Duration period)
    : period_(std::clamp(period, absl::Microseconds(100), absl::Seconds(1))) {}

PeakThreadSampler::~PeakThreadSampler() { Stop(); }

absl::Status PeakThreadSampler::Start() {
  if (thread_.joinable() || stat_fd_ >= 0) {
    return absl::FailedPreconditionError("PeakThreadSampler::Start: already running");
  }
  stat_fd_ = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (stat_fd_ < 0) {
    return absl::NotFoundError(absl::StrCat("/proc/self/stat: cannot open (", std::strerror(errno), ")"));
  }
  // qemu-user fakes /proc/self/stat (num_threads 0, and a snapshot taken at open):
  // sample the kernel's /proc/self/status there (the emulator process's threads).
  status_file_ = false;
  char probe[1024];
  const ssize_t n = pread(stat_fd_, probe, sizeof probe - 1, 0);
  if (n > 0) {
    probe[n] = '\0';
    if (ParseStatThreadCount(probe) == 0) {
      const int status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
      if (status_fd >= 0) {
        close(stat_fd_);
        stat_fd_ = status_fd;
        status_file_ = true;
      }
    }
  }
  peak_.store(0, std::memory_order_relaxed);
  samples_.store(0, std::memory_order_relaxed);
  own_usage_ = ResourceUsage{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_requested_ = false;
  }
  Sample(/*own_thread_alive=*/false);
  try {
    thread_ = std::thread([this] { Loop(); });
  } catch (const std::system_error& e) {
    close(stat_fd_);
    stat_fd_ = -1;
    return absl::ResourceExhaustedError(absl::StrCat("PeakThreadSampler: cannot create its thread: ", e.what()));
  }
  return absl::OkStatus();
}

void PeakThreadSampler::Stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_requested_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  if (stat_fd_ >= 0) {
    Sample(/*own_thread_alive=*/false);
    close(stat_fd_);
    stat_fd_ = -1;
  }
}

void PeakThreadSampler::Sample(bool own_thread_alive) {
  char buf[4096];
  const ssize_t n = pread(stat_fd_, buf, sizeof buf - 1, 0);
  if (n <= 0) return;
  buf[n] = '\0';
  int64_t threads = status_file_ ? ParseStatusThreadCount(buf) : ParseStatThreadCount(buf);
  if (threads <= 0) return;
  if (own_thread_alive) --threads;
  samples_.fetch_add(1, std::memory_order_relaxed);
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (threads > peak && !peak_.compare_exchange_weak(peak, threads, std::memory_order_relaxed)) {
  }
}

void PeakThreadSampler::Loop() {
  const auto period = absl::ToChronoNanoseconds(period_);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_requested_) {
    lock.unlock();
    Sample(/*own_thread_alive=*/true);
    lock.lock();
    cv_.wait_for(lock, period, [this] { return stop_requested_; });
  }
  lock.unlock();
  // Read by Stop() after join(), which orders this write before that read.
  own_usage_ = ReadThreadResourceUsage().value_or(ResourceUsage{});
}

}  // namespace fleetmark::engine
