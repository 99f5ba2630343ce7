#include "engine/scenarios/load_client.h"

#include <utility>  // before Boost 1.74 asio/awaitable.hpp, which needs std::exchange
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "absl/synchronization/mutex.h"
#include "engine/common/status_macros.h"
#include "engine/scenarios/executor_options.h"
#include "engine/measure/process_stats.h"
#include "engine/strategies/executors/asio_runner.h"

namespace fleetmark::engine {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// Counters of the users on one io_context; touched only by that context's thread.
struct ThreadStats {
  std::string first_other_error;
  LatencyHistogram hold_latency;
  uint64_t responses = 0, hold_ok = 0, refused = 0, timeouts = 0, server_errors = 0, other_errors = 0,
           response_bytes = 0;
  Clock::duration max_lag{};
};

struct Schedule {
  Clock::time_point t0, hold_start, end;
  Clock::duration ramp, think, timeout;
  uint32_t users = 0;
  tcp::endpoint server;
};

class Completion {
 public:
  explicit Completion(uint32_t users) : left_(users) {}
  void UserDone() {
    absl::MutexLock lock(&mu_);
    --left_;
  }
  void Wait() {
    absl::MutexLock lock(&mu_);
    auto all_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return left_ == 0; };
    mu_.Await(absl::Condition(&all_done));
  }

 private:
  absl::Mutex mu_;
  uint32_t left_ ABSL_GUARDED_BY(mu_);
};

asio::awaitable<void> User(uint32_t u, const Schedule& s, ThreadStats& stats, Completion& done) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer pause(executor);
  asio::steady_timer watchdog(executor);
  tcp::socket socket(executor);
  boost::beast::flat_buffer buffer;
  bool connected = false;
  bool timed_out = false;
  uint64_t generation = 0;  // tells a stale watchdog expiry from the current one
  boost::system::error_code ec;

  Clock::time_point scheduled = s.t0 + s.ramp * u / s.users;
  pause.expires_at(scheduled);
  co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  auto close = [&] {
    boost::system::error_code ignored;
    socket.close(ignored);
    socket = tcp::socket(executor);
    buffer.clear();
    connected = false;
  };
  while (Clock::now() < s.end) {
    stats.max_lag = std::max(stats.max_lag, Clock::now() - scheduled);
    if (!connected) {
      co_await socket.async_connect(s.server, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        ++stats.refused;
        close();
      } else {
        connected = true;
        socket.set_option(tcp::no_delay(true), ec);
      }
    }
    if (connected) {
      timed_out = false;
      const uint64_t current = ++generation;
      watchdog.expires_after(s.timeout);
      watchdog.async_wait([&, current](boost::system::error_code wait_ec) {
        if (wait_ec || current != generation) return;
        timed_out = true;
        boost::system::error_code ignored;
        socket.cancel(ignored);
        socket.shutdown(tcp::socket::shutdown_both, ignored);
      });
      http::request<http::empty_body> request{http::verb::get, "/items", 11};
      request.set(http::field::host, "127.0.0.1");
      request.keep_alive(true);
      const Clock::time_point sent = Clock::now();
      co_await http::async_write(socket, request, asio::redirect_error(asio::use_awaitable, ec));
      http::response_parser<http::string_body> parser;
      parser.body_limit(std::uint64_t{1} << 30);
      if (!ec) {
        co_await http::async_read(socket, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
      }
      const Clock::time_point received = Clock::now();
      ++generation;
      watchdog.cancel();
      if (ec) {
        if (timed_out) {
          ++stats.timeouts;
        } else {
          ++stats.other_errors;
          if (stats.first_other_error.empty()) stats.first_other_error = ec.message();
        }
        close();
      } else {
        ++stats.responses;
        const auto& response = parser.get();
        const unsigned status = response.result_int();
        if (status >= 500) {
          ++stats.server_errors;
        } else if (status >= 200 && status < 300) {
          if (sent >= s.hold_start && received <= s.end) {
            ++stats.hold_ok;
            stats.hold_latency.Record(absl::FromChrono(received - sent));
          }
          stats.response_bytes = response.body().size();
        } else {
          ++stats.other_errors;
          if (stats.first_other_error.empty()) {
            stats.first_other_error = "HTTP " + std::to_string(status);
          }
        }
        if (!response.keep_alive()) close();
      }
    }
    scheduled = Clock::now() + s.think;
    pause.expires_at(scheduled);
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
  done.UserDone();
}

}  // namespace

absl::StatusOr<LoadReport> LoadClient::Run() {
  AsioRunner runner;
  std::atomic<int> raised{0};
  ThreadOptions options = ScenarioThreadOptions(0, "fm-client");
  options.on_thread_start = [&raised] {
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10) == 0) raised.fetch_add(1);
  };
  FLEETMARK_RETURN_IF_ERROR(runner.Start(config_.client_threads, options));
  std::vector<ThreadStats> stats(runner.size());
  Schedule s;
  s.users = config_.users;
  s.ramp = absl::ToChronoNanoseconds(config_.ramp);
  s.think = absl::ToChronoNanoseconds(config_.think);
  s.timeout = absl::ToChronoNanoseconds(config_.request_timeout);
  s.server = tcp::endpoint(asio::ip::address_v4::loopback(), port_);
  s.t0 = Clock::now() + std::chrono::milliseconds(50);
  s.hold_start = s.t0 + s.ramp;
  s.end = s.hold_start + absl::ToChronoNanoseconds(config_.hold);
  Completion done(config_.users);
  for (uint32_t u = 0; u < config_.users; ++u) {
    const int k = static_cast<int>(u % runner.size());
    asio::co_spawn(runner.context(k), User(u, s, stats[k], done), asio::detached);
  }
  done.Wait();
  const Clock::time_point finished = Clock::now();

  // CPU time of each generator thread, read on that thread.
  std::vector<absl::Duration> cpu(runner.size());
  Completion read(static_cast<uint32_t>(runner.size()));
  for (int k = 0; k < runner.size(); ++k) {
    asio::post(runner.context(k), [&cpu, &read, k] {
      if (absl::StatusOr<ResourceUsage> usage = ReadThreadResourceUsage(); usage.ok()) {
        cpu[k] = usage->user_cpu + usage->system_cpu;
      }
      read.UserDone();
    });
  }
  read.Wait();
  const int threads = runner.size();
  runner.Stop();

  LoadReport report;
  report.raised_priority = raised.load() == threads;
  report.hold = config_.hold;
  report.wall = absl::FromChrono(finished - s.t0);
  for (int k = 0; k < static_cast<int>(stats.size()); ++k) {
    const ThreadStats& t = stats[k];
    report.responses += t.responses;
    report.hold_ok += t.hold_ok;
    report.hold_latency.Merge(t.hold_latency);
    report.refused += t.refused;
    report.timeouts += t.timeouts;
    report.server_errors += t.server_errors;
    report.other_errors += t.other_errors;
    report.response_bytes = std::max(report.response_bytes, t.response_bytes);
    report.max_lag = std::max(report.max_lag, absl::FromChrono(t.max_lag));
    report.cpu += cpu[k];
    if (report.first_other_error.empty()) report.first_other_error = t.first_other_error;
  }
  return report;
}

}  // namespace fleetmark::engine
