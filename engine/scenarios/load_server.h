// The HTTP/1.1 server of the load scenario (S3), on 127.0.0.1 with a kernel-chosen
// port, built on one of four server models. Every request (any path) gets a JSON array
// of K objects, after a simulated database read (a wait: blocking parks the thread
// handling the request, suspending uses the model's own timer). Connections are
// keep-alive (HTTP/1.1 default).
//
//   fixed_pool  an Asio poller thread reads requests and hands each to a pool of N
//               threads (default 100) through a bounded queue (default 100 waiting);
//               when the queue is full the request gets 503 (a classic servlet
//               container: S3's "thread pool of 100 with a queue of 100"). Blocking only.
//   fiber       the poller hands each request to a Boost.Fiber fibre on N threads
//               (like virtual threads: blocking-style handler code, the I/O done by a
//               poller on its behalf).
//   coroutine   one C++20 coroutine per connection on N Asio io_contexts (Beast).
//   event_loop  plain Beast callbacks on N io_contexts (S3's event loop of 8 threads).
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto server, MakeLoadServer("event_loop", IoMode::kSuspending, config));
//   FLEETMARK_RETURN_IF_ERROR(server->Start());   // then connect to server->port()
//   ...; server->Stop();
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/scenarios/params.h"
#include "engine/strategies/registry.h"

namespace fleetmark::engine {

class LoadServer {
 public:
  virtual ~LoadServer() = default;
  // Binds 127.0.0.1:0, starts the model's threads and begins accepting. Errors:
  // ResourceExhausted (threads), Internal (socket errors, with the text). Call once.
  virtual absl::Status Start() = 0;
  // Stops accepting, lets handlers already running finish, joins every thread and
  // closes every connection. Idempotent; also run by the destructor.
  virtual void Stop() = 0;
  virtual uint16_t port() const = 0;
  // Responses written completely (any status), and those that were 503 (queue full).
  // Thread-safe.
  virtual uint64_t responses() const = 0;
  virtual uint64_t rejected() const = 0;
  // OS threads the model runs (workers + pollers).
  virtual int threads() const = 0;
  // A one-line description of the model as configured.
  virtual std::string Describe() const = 0;
};

// Returns an unstarted server for `strategy` (fixed_pool, fiber, coroutine,
// event_loop); Unimplemented for any other strategy or for fixed_pool with suspending
// waits, with the reason. `suspending` selects the wait of the simulated database read.
absl::StatusOr<std::unique_ptr<LoadServer>> MakeLoadServer(std::string_view strategy, bool suspending,
                                                           const LoadConfig& config);

// True for the strategies a load server is built on: the Asio carriers (coroutine,
// event_loop: one io_context per thread), fibres, and a pool sized by threads
// (fixed_pool). Thread-safe.
bool IsLoadServer(const StrategyTraits& strategy);

// The response body for `objects` objects: a JSON array serialised by nlohmann-json.
// Pure; thread-safe.
std::string BuildLoadResponseBody(uint32_t objects);

}  // namespace fleetmark::engine
