// The web server's front: one epoll thread accepts connections and reads each request
// whole (request_framing.h) under a deadline, and a small pool of workers answers only
// complete requests. A worker is never held by a client that sends slowly or not at all
// (slowloris, idle keep-alive connections, thousands of idle TCP connections): those
// wait in the epoll set, which costs a descriptor and at most one request's buffer each.
//
//   RequestGate::Options options;                 // limits below
//   auto gate = RequestGate::Start(listen_fd, options,
//       [](int fd, std::string_view request, bool last) { ...write the response to fd...;
//                                                          return keep_alive; },
//       [](int status, std::string_view error) { return "HTTP/1.1 ..."; });
//   gate->Stop();                                 // or destroy it
//
// Limits (Options):
//   - a request (request line, header fields and body) is read whole within
//     `request_deadline` of its first byte (of the accept, for a connection's first
//     request); later: 408 and the connection closed. An idle keep-alive connection is
//     closed after `keep_alive_idle` without a byte, a new connection that sends nothing
//     after `request_deadline`;
//   - framing refusals (400, 411, 413, 414, 431) are answered as soon as the head shows
//     them, without reading the body, and the connection is closed (after a short
//     lingering read that discards at most kLingerBytes, so the client sees the answer);
//   - at most `max_connections_per_client` connections per client address and
//     `max_connections` in all. A new connection over either cap closes the oldest
//     connection that is idle or still sending its request — of that client, or for the
//     total cap of the client holding the most — so a new request is always read; only
//     when every candidate is being answered is the new one refused (503, closed).
//   - accept failing for lack of descriptors (EMFILE) closes the oldest such connection.
// Thread-safety: Start/Stop from one thread; the handler runs on worker threads, one
// call per connection at a time.
#pragma once

#include <sys/socket.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/http/request_framing.h"

namespace fleetmark::http {

class RequestGate {
 public:
  struct Options {
    RequestLimits limits;
    absl::Duration request_deadline = absl::Seconds(5);
    absl::Duration keep_alive_idle = absl::Seconds(2);
    int max_connections = 256;
    int max_connections_per_client = 32;
    int max_requests_per_connection = 100;  // then the response says Connection: close
    int workers = 16;
  };
  // Writes the response to the request to `fd` (non-blocking; poll for POLLOUT) and
  // says whether the connection may carry another request. `last`: it may not (the
  // response should say Connection: close).
  using Handler = std::function<bool(int fd, std::string_view request, bool last)>;
  // A whole response (status line, headers, body) for a refusal the gate answers itself.
  using ErrorResponse = std::function<std::string(int status, std::string_view error)>;

  // Serves on `listen_fd` (bound and listening; the gate makes it non-blocking and
  // closes it at Stop). Internal when epoll or the eventfd cannot be created.
  static absl::StatusOr<std::unique_ptr<RequestGate>> Start(int listen_fd, const Options& options, Handler handler,
                                                            ErrorResponse error_response);

  virtual ~RequestGate() = default;
  // Stops accepting, lets requests being answered finish, closes every connection and
  // joins the threads. Idempotent.
  virtual void Stop() = 0;
};

// A socket address as text: "127.0.0.1", "::1" (an IPv4-mapped IPv6 address as IPv4;
// "" for another family), and its port in `*port` when not null. The per-client cap's
// key.
std::string SocketAddressText(const sockaddr_storage& address, int* port);

// Bytes read and discarded after a refusal before the connection is closed anyway.
inline constexpr size_t kLingerBytes = 256 * 1024;

}  // namespace fleetmark::http
