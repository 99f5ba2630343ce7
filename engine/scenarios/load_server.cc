#include "engine/scenarios/load_server.h"

#include <utility>  // before Boost 1.74 asio/awaitable.hpp, which needs std::exchange
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/fiber/operations.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/common/status_macros.h"
#include "engine/scenarios/executor_options.h"
#include "engine/strategies/carrier.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/executors/fiber_runner.h"
#include "engine/strategies/registry.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::engine {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

std::shared_ptr<Response> MakeResponse(const Request& request, http::status status, std::string body) {
  auto response = std::make_shared<Response>(status, request.version());
  response->set(http::field::server, "fleetmark");
  response->set(http::field::content_type, "application/json");
  response->keep_alive(request.keep_alive());
  response->body() = std::move(body);
  response->prepare_payload();
  return response;
}

// Accepting, counting and the database wait, shared by the models.
class ServerBase : public LoadServer {
 public:
  ServerBase(const LoadConfig& config, bool suspending) : config_(config), suspending_(suspending) {}

  uint16_t port() const override { return port_; }
  uint64_t responses() const override { return responses_.load(); }
  uint64_t rejected() const override { return rejected_.load(); }

 protected:
  // Opens the acceptor on io_context `ctx` (loopback, port 0).
  absl::Status Listen(asio::io_context& ctx) {
    boost::system::error_code ec;
    acceptor_ = std::make_unique<tcp::acceptor>(ctx);
    const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), 0);
    acceptor_->open(endpoint.protocol(), ec);
    if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return absl::InternalError(absl::StrCat("load server: listen on 127.0.0.1: ", ec.message()));
    port_ = acceptor_->local_endpoint().port();
    return absl::OkStatus();
  }
  void CloseAcceptor(asio::io_context& ctx) {
    if (!acceptor_) return;
    // The acceptor belongs to `ctx`'s thread: close it there and wait.
    std::atomic<bool> closed{false};
    asio::post(ctx, [this, &closed] {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
      closed = true;
    });
    const absl::Time deadline = SteadyNow() + absl::Seconds(5);
    while (!closed && SteadyNow() < deadline) absl::SleepFor(absl::Milliseconds(1));
  }
  void BlockingDbWait() const { std::this_thread::sleep_for(absl::ToChronoNanoseconds(config_.db_wait)); }
  void Written(const Response& response) {
    responses_.fetch_add(1, std::memory_order_relaxed);
    if (response.result() == http::status::service_unavailable) rejected_.fetch_add(1);
  }

  LoadConfig config_;
  bool suspending_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  uint16_t port_ = 0;
  std::atomic<uint64_t> responses_{0};
  std::atomic<uint64_t> rejected_{0};
};

// One keep-alive HTTP/1.1 connection driven by Beast callbacks, shared by the
// event_loop and dispatch sessions: Read() reads a request into request_ and calls
// Derived::OnRequest(); the derived session answers with Write(response), which counts
// the written response (`written`) and reads the next request unless the response
// closes the connection. A read or write error closes the socket. Owned by the
// shared_ptrs in its pending handlers; all of it runs on the socket's io_context.
template <typename Derived>
class HttpSession : public std::enable_shared_from_this<Derived> {
 public:
  void Read() {
    request_ = {};
    http::async_read(socket_, buffer_, request_,
                     [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
                       if (ec) return self->Close();
                       self->OnRequest();
                     });
  }

 protected:
  HttpSession(tcp::socket socket, std::function<void(const Response&)> written)
      : socket_(std::move(socket)), written_(std::move(written)) {}

  void Write(std::shared_ptr<Response> response) {
    response_ = std::move(response);
    http::async_write(socket_, *response_, [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
      if (ec) return self->Close();
      self->written_(*self->response_);
      if (!self->response_->keep_alive()) return self->Close();
      self->Read();
    });
  }
  void Close() {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
  Request request_;
  std::shared_ptr<Response> response_;
  std::function<void(const Response&)> written_;
};

// ---- event_loop: Beast callbacks ----

class CallbackSession : public HttpSession<CallbackSession> {
 public:
  CallbackSession(tcp::socket socket, const LoadConfig& config, bool suspending,
                  std::function<void(const Response&)> written)
      : HttpSession(std::move(socket), std::move(written)),
        timer_(socket_.get_executor()),
        config_(config),
        suspending_(suspending) {}

 private:
  friend class HttpSession<CallbackSession>;

  // The database wait, then the response.
  void OnRequest() {
    if (!suspending_) {
      std::this_thread::sleep_for(absl::ToChronoNanoseconds(config_.db_wait));
      return Respond();
    }
    timer_.expires_after(absl::ToChronoNanoseconds(config_.db_wait));
    timer_.async_wait([self = shared_from_this()](boost::system::error_code) { self->Respond(); });
  }
  void Respond() { Write(MakeResponse(request_, http::status::ok, BuildLoadResponseBody(config_.objects))); }

  asio::steady_timer timer_;
  const LoadConfig& config_;
  bool suspending_;
};

// ---- coroutine: one C++20 coroutine per connection ----

asio::awaitable<void> CoroutineSession(tcp::socket socket, LoadConfig config, bool suspending,
                                       std::function<void(const Response&)> written) {
  boost::beast::flat_buffer buffer;
  asio::steady_timer timer(socket.get_executor());
  for (;;) {
    Request request;
    boost::system::error_code ec;
    co_await http::async_read(socket, buffer, request, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    if (suspending) {
      timer.expires_after(absl::ToChronoNanoseconds(config.db_wait));
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    } else {
      std::this_thread::sleep_for(absl::ToChronoNanoseconds(config.db_wait));
    }
    std::shared_ptr<Response> response = MakeResponse(request, http::status::ok, BuildLoadResponseBody(config.objects));
    co_await http::async_write(socket, *response, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    written(*response);
    if (!response->keep_alive()) break;
  }
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

// event_loop and coroutine: N io_contexts; connections are spread round-robin.
class AsioServer final : public ServerBase {
 public:
  AsioServer(const StrategyTraits& strategy, const LoadConfig& config, bool suspending)
      : ServerBase(config, suspending), strategy_(strategy), coroutines_(strategy.carrier == Carrier::kAsioCoroutine) {}
  ~AsioServer() override { Stop(); }

  absl::Status Start() override {
    FLEETMARK_ASSIGN_OR_RETURN(carrier_, StartCarrier(strategy_, config_.server_threads,
                                                      ScenarioThreadOptions(config_.stack_kib, "fm-server")));
    runner_ = carrier_->asio();
    FLEETMARK_RETURN_IF_ERROR(Listen(runner_->context(0)));
    asio::post(runner_->context(0), [this] { Accept(); });
    return absl::OkStatus();
  }
  void Stop() override {
    if (runner_ == nullptr) return;
    CloseAcceptor(runner_->context(0));
    carrier_->Stop();
    runner_ = nullptr;
  }
  int threads() const override { return config_.server_threads; }
  std::string Describe() const override {
    return absl::StrCat(coroutines_ ? "C++20 coroutine per connection" : "Beast callbacks", " on ",
                        config_.server_threads, " io_contexts, ", suspending_ ? "steady_timer" : "blocking",
                        " database wait");
  }

 private:
  void Accept() {
    acceptor_->async_accept(runner_->Next(), [this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        auto written = [this](const Response& r) { Written(r); };
        if (coroutines_) {
          auto executor = socket.get_executor();
          asio::co_spawn(executor, CoroutineSession(std::move(socket), config_, suspending_, written), asio::detached);
        } else {
          std::make_shared<CallbackSession>(std::move(socket), config_, suspending_, written)->Read();
        }
      }
      Accept();  // also after an error such as EMFILE: the next accept may succeed
    });
  }

  const StrategyTraits& strategy_;
  bool coroutines_;
  std::unique_ptr<StrategyCarrier> carrier_;
  AsioRunner* runner_ = nullptr;  // carrier_'s, while started
};

// ---- fixed_pool and fiber: a poller thread reads, a handler executor answers ----

class DispatchSession : public HttpSession<DispatchSession> {
 public:
  // Runs `job` on the handler executor; returns false when it refused (queue full).
  using Dispatch = std::function<bool(std::function<void()> job)>;

  DispatchSession(tcp::socket socket, const LoadConfig& config, Dispatch dispatch, std::function<void()> db_wait,
                  std::function<void(const Response&)> written)
      : HttpSession(std::move(socket), std::move(written)),
        config_(config),
        dispatch_(std::move(dispatch)),
        db_wait_(std::move(db_wait)) {}

 private:
  friend class HttpSession<DispatchSession>;

  // The database wait and the response on the handler executor; the write back on
  // the poller.
  void OnRequest() {
    auto self = shared_from_this();
    const bool accepted = dispatch_([self] {
      self->db_wait_();
      auto response = MakeResponse(self->request_, http::status::ok, BuildLoadResponseBody(self->config_.objects));
      asio::post(self->socket_.get_executor(), [self, response] { self->Write(response); });
    });
    if (!accepted) {
      Write(MakeResponse(request_, http::status::service_unavailable, R"({"error":"request queue full"})"));
    }
  }
  const LoadConfig& config_;
  Dispatch dispatch_;
  std::function<void()> db_wait_;
};

class DispatchServer final : public ServerBase {
 public:
  DispatchServer(const StrategyTraits& strategy, const LoadConfig& config, bool suspending)
      : ServerBase(config, suspending), strategy_(strategy), fibres_(strategy.carrier == Carrier::kFiber) {}
  ~DispatchServer() override { Stop(); }

  absl::Status Start() override {
    FLEETMARK_RETURN_IF_ERROR(poller_.Start(1, ScenarioThreadOptions(0, "fm-poller")));
    FLEETMARK_ASSIGN_OR_RETURN(handlers_, StartCarrier(strategy_, config_.server_threads,
                                                       ScenarioThreadOptions(config_.stack_kib, "fm-server")));
    started_ = true;
    FLEETMARK_RETURN_IF_ERROR(Listen(poller_.context(0)));
    asio::post(poller_.context(0), [this] { Accept(); });
    return absl::OkStatus();
  }
  void Stop() override {
    if (!started_) return;
    started_ = false;
    CloseAcceptor(poller_.context(0));
    // Handlers still running post their writes to the poller: stop them first.
    handlers_->Stop();
    poller_.Stop();
  }
  int threads() const override { return config_.server_threads + 1; }
  std::string Describe() const override {
    if (fibres_) {
      return absl::StrCat("fibre per request on ", config_.server_threads, " threads + 1 Asio poller thread, ",
                          suspending_ ? "this_fiber::sleep_for" : "blocking", " database wait");
    }
    return absl::StrCat("pool of ", config_.server_threads, " threads, queue of ", config_.queue_capacity,
                        " (503 when full) + 1 Asio poller thread");
  }

 private:
  bool Dispatch(std::function<void()> job) {
    if (fibres_) return handlers_->executor().Submit(std::move(job)).ok();
    if (queued_.fetch_add(1) >= config_.queue_capacity) {
      queued_.fetch_sub(1);
      return false;
    }
    const bool ok = handlers_->executor()
                        .Submit([this, job = std::move(job)] {
                          queued_.fetch_sub(1);
                          job();
                        })
                        .ok();
    if (!ok) queued_.fetch_sub(1);
    return ok;
  }
  void DbWait() {
    if (fibres_ && suspending_) {
      boost::this_fiber::sleep_for(absl::ToChronoNanoseconds(config_.db_wait));
    } else {
      BlockingDbWait();
    }
  }
  void Accept() {
    acceptor_->async_accept(poller_.context(0), [this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        std::make_shared<DispatchSession>(
            std::move(socket), config_, [this](std::function<void()> job) { return Dispatch(std::move(job)); },
            [this] { DbWait(); }, [this](const Response& r) { Written(r); })
            ->Read();
      }
      Accept();
    });
  }

  const StrategyTraits& strategy_;
  bool fibres_;
  bool started_ = false;
  AsioRunner poller_;
  std::unique_ptr<StrategyCarrier> handlers_;  // the pool or fibre runner, once started
  std::atomic<int> queued_{0};
};

}  // namespace

std::string BuildLoadResponseBody(uint32_t objects) {
  nlohmann::json items = nlohmann::json::array();
  for (uint32_t i = 0; i < objects; ++i) {
    items.push_back(
        {{"id", i}, {"name", absl::StrCat("item-", i)}, {"price_cents", 50 + 25 * i}, {"in_stock", i % 3 != 0}});
  }
  return items.dump();
}

bool IsLoadServer(const StrategyTraits& s) {
  return IsAsio(s.carrier) || s.carrier == Carrier::kFiber || (s.carrier == Carrier::kPool && !s.ignores_threads);
}

absl::StatusOr<std::unique_ptr<LoadServer>> MakeLoadServer(std::string_view name, bool suspending,
                                                           const LoadConfig& config) {
  const StrategyTraits* strategy = FindStrategy(name);
  if (strategy == nullptr || !IsLoadServer(*strategy)) {
    return absl::UnimplementedError(
        absl::StrCat("load servers are ", StrategyNames(IsLoadServer), "; got ", std::string(name)));
  }
  if (IsAsio(strategy->carrier)) return std::make_unique<AsioServer>(*strategy, config, suspending);
  if (suspending && !strategy->suspending) {
    return absl::UnimplementedError(
        absl::StrCat(std::string(name), " has no suspending wait: its handler threads block on the database read"));
  }
  return std::make_unique<DispatchServer>(*strategy, config, suspending);
}

}  // namespace fleetmark::engine
