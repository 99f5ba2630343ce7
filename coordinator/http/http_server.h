// The coordinator's HTTP edge: a read-only JSON API under /api/v1/ (agents, runs, run
// results, samples, comparison, history) plus the bundled web view (static files built
// from web/ into the build tree). Requests are read by request_gate.h (one epoll thread)
// and answered by cpp-httplib 0.11's routing on a small worker pool.
//
//   fleetmark::http::HttpServerOptions options;
//   options.address = "127.0.0.1:8080";          // from --http_address
//   options.pg_uri = "postgresql://...";         // the coordinator's database
//   auto server = fleetmark::http::StartHttpServer(options);
//   if (!server.ok()) ...;                       // bad address, port in use, no web root
//   std::cout << (*server)->url() << "\n";       // http://127.0.0.1:8080/
//   // ~HttpServer() (or Stop()) stops listening and joins the server threads.
//
// `/healthz` and `/metrics` (when the options give their callbacks) need no bearer
// token: they say nothing about agents, runs or results beyond counts.
//
// Requests (request_gate.h, request_framing.h): each is read whole within 5 s (the
// request line, header fields and body; 408 after), a body over 64 KiB is 413 for every
// method from its Content-Length alone, Transfer-Encoding is 411; idle keep-alive
// connections close after 2 s.
//
// Security: every endpoint is read-only (GET/HEAD; other methods get 405). When
// `bearer_token` is set, the API requires `Authorization: Bearer <token>` (the scheme in
// any case, RFC 7235 2.1); a non-loopback
// address without a token is refused unless `allow_insecure_remote` is set. Without a
// token, a request whose Host header is not localhost or an IP literal gets 403 (DNS
// rebinding: another site's name pointed at 127.0.0.1 must not read the API).
#pragma once

#include "engine/common/host_port.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store/read_router.h"
#include "coordinator/store/web_reader.h"
#include "engine/common/clock.h"

namespace fleetmark::http {

struct HttpServerOptions {
  // "host:port" (IPv4 literal, "[IPv6]" or "localhost"); port 0 picks a free port.
  std::string address = "127.0.0.1:0";
  // Directory holding index.html and assets/ (the build's web bundle). Empty = the
  // first of DefaultWebRoots() that holds an index.html.
  std::string web_root;
  // PostgreSQL URI used by StartHttpServer(options) to open its own read connections.
  std::string pg_uri;
  // Bearer token for the API; "" = none (only allowed on loopback addresses, unless
  // allow_insecure_remote).
  std::string bearer_token;
  bool allow_insecure_remote = false;
  // Database connections opened on demand (1..256). The server runs 2 worker threads
  // per connection; they answer complete requests only (request_gate.h reads each
  // request whole, within 5 s, on one epoll thread), so a slow or idle client holds
  // none.
  int threads = 8;
  // Client connections held at most (1..65536), and per client address (1..
  // max_connections). A new connection over either cap closes the oldest one that is
  // idle or still sending its request (of that client; for the total, of the client
  // holding the most), so a slow or idle crowd cannot keep a new request out
  // (request_gate.h). Behind a reverse proxy every client is the proxy's address.
  int max_connections = 256;
  int max_connections_per_client = 32;
  // `GET /healthz`: returns the applied schema version, or why the coordinator is not
  // healthy (200 {"status":"ok",...} / 503 {"status":"unavailable","reason":...}).
  // Null = no such path (404). Called on server threads: must be thread-safe.
  std::function<absl::StatusOr<int>()> health;
  // `GET /metrics`: a Prometheus text exposition (format 0.0.4) body. Null = 404.
  // Each scrape calls it once.
  // Called on server threads: must be thread-safe.
  std::function<std::string()> metrics;
  // With a read replica: "replica" or "primary", the server reads go to now, added to
  // `/healthz` as "reads". Null = no such field. Called on server threads.
  std::function<std::string()> read_server;
  // Where the API's relative times start (changes?since=24h): the coordinator's clock.
  // Null = SystemClock(). Not owned; outlives the server (tests pass a FakeClock).
  const Clock* clock = nullptr;
};

// A running server. Not copyable; destroying it stops it. Thread-safe.
class HttpServer {
 public:
  virtual ~HttpServer() = default;
  // The bound port (never 0 once started).
  virtual int port() const = 0;
  // Base URL, e.g. "http://127.0.0.1:8080/".
  virtual std::string url() const = 0;
  // The directory the web view's files are served from (options.web_root as resolved).
  virtual std::string web_root() const = 0;
  // Stops accepting, finishes in-flight requests, joins threads. Idempotent.
  virtual void Stop() = 0;
};

// Where an empty `web_root` looks, in order: `<dir of the running executable>/../share/
// fleetmark/web` (an installed package: /usr/bin -> /usr/share/fleetmark/web), then the
// bundle of the build tree this binary was built in (compiled in).
std::vector<std::string> DefaultWebRoots();

// Parses "host:port" (engine/common/host_port.h) for --http_address: errors name
// "http address".
inline absl::StatusOr<std::pair<std::string, int>> ParseHostPort(std::string_view address) {
  return ::fleetmark::ParseHostPort(address, "http address");
}

// True for "localhost", "::1" and 127.0.0.0/8 hosts (as returned by ParseHostPort).
bool IsLoopbackHost(std::string_view host);

// True when `host_header` (a Host header value, with or without ":port") may reach a
// server without a bearer token: "" (no header), "localhost" (any case), an IPv4
// literal or a bracketed IPv6 literal. Host names are refused: a browser sends the name
// it resolved, and an attacker's name can resolve to a loopback address.
bool IsAllowedHostHeader(std::string_view host_header);

// True when the port part of `host_header` (after the last ':' or after "]:") is 1..5
// digits with a value 1..65535, or there is none. The form of the host is not judged.
bool HasValidHostPort(std::string_view host_header);

// The credentials of an `Authorization` header value of the Bearer scheme: what follows
// "Bearer" (any case, RFC 7235 2.1) and one or more spaces; "" for another scheme or none.
std::string_view BearerCredentials(std::string_view header);

// Descriptors the web view may hold: `readers` × `threads` database connections (2 with
// a read replica) plus `max_connections` client connections (stream_budget.h's reserve).
int HttpDescriptors(const HttpServerOptions& options, int readers);

// The checks StartHttpServer makes before touching the network or the database, for
// callers that want to refuse bad flags early: the address form, the thread count, the
// connection caps, and
// the token rule (a non-loopback address needs `bearer_token` unless
// `allow_insecure_remote`; a token must be 1..4096 visible ASCII characters, no spaces,
// so it fits an Authorization header). Errors: InvalidArgument naming the option.
absl::Status ValidateHttpServerOptions(const HttpServerOptions& options);

// Starts serving with a PostgreSQL-backed reader opened on `options.pg_uri`.
// Errors: InvalidArgument (address, threads, token rules), FailedPrecondition (web
// root without index.html), Unavailable (database or bind failure).
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttpServer(const HttpServerOptions& options);

// Same, with the API's reads on the streaming replica at `replica_uri` while `router`
// says so, else on `options.pg_uri` (store/web_routed_reader.h). A replica down at start
// is not an error. `router` must outlive the server.
absl::StatusOr<std::unique_ptr<HttpServer>> StartRoutedHttpServer(const HttpServerOptions& options,
                                                                  const std::string& replica_uri,
                                                                  store::ReadRouter& router);

// Same, over any reader (tests and benchmarks inject theirs). `reader` is shared with
// the server threads and must be thread-safe.
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttpServer(const HttpServerOptions& options,
                                                            std::shared_ptr<store::WebReader> reader);

}  // namespace fleetmark::http
