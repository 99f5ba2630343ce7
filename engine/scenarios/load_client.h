// The closed-loop load generator of the load scenario (S3): V virtual users, each one
// keep-alive HTTP/1.1 connection to 127.0.0.1:<port>, ramped up linearly (user u starts
// at ramp·u/V), then held; each user sends a request, reads the whole response, thinks,
// and repeats until the end of the hold. Users are C++20 coroutines on the generator's
// own Asio io_contexts (Beast parser), so one thread drives thousands of users.
//
//   LoadClient client(config, port);
//   FLEETMARK_ASSIGN_OR_RETURN(LoadReport report, client.Run());
//
// Errors per request: refused (the connection could not be made), timeout (no full
// response within request_timeout; the connection is closed), 5xx, other (reset,
// early close, 4xx). After an error the user reconnects after its think time.
//
// The generator's threads ask for nice -10 (allowed for root / CAP_SYS_NICE), so that
// on a small machine a server with many busy threads cannot starve the generator; the
// report says whether it got it, and its max send lag shows whether it kept up.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/scenarios/latency_histogram.h"
#include "engine/scenarios/params.h"

namespace fleetmark::engine {

struct LoadReport {
  // Responses read completely over the whole run (any status) — comparable with the
  // server's count.
  uint64_t responses = 0;
  // 2xx responses received during the hold window, and their latencies (send of the
  // request to the last byte of the response).
  uint64_t hold_ok = 0;
  LatencyHistogram hold_latency;
  uint64_t refused = 0, timeouts = 0, server_errors = 0, other_errors = 0;
  uint64_t response_bytes = 0;    // body size of the last 2xx response
  absl::Duration hold;            // the hold window's length
  absl::Duration cpu;             // CPU time of the generator's threads
  absl::Duration wall;            // from the first user's start to the last user's end
  absl::Duration max_lag;         // worst lateness of a send vs its scheduled time
  std::string first_other_error;  // text of the first "other" error, if any
  bool raised_priority = false;   // generator threads run at nice -10
};

class LoadClient {
 public:
  LoadClient(const LoadConfig& config, uint16_t port) : config_(config), port_(port) {}

  // Runs the whole ramp + hold on config.client_threads new threads and returns when
  // every user has finished (in-flight requests get up to request_timeout).
  // ResourceExhausted if the threads cannot be created. Call once.
  absl::StatusOr<LoadReport> Run();

 private:
  LoadConfig config_;
  uint16_t port_;
};

}  // namespace fleetmark::engine
