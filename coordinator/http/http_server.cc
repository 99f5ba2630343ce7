#include "coordinator/http/http_server.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include <arpa/inet.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "coordinator/http/api.h"
#include "coordinator/http/request_framing.h"
#include "coordinator/http/request_gate.h"
#include "coordinator/store/web_routed_reader.h"
#include "coordinator/service/metrics.h"
#include "engine/common/secret_file.h"
#include "engine/common/status_macros.h"

#ifndef FLEETMARK_WEB_DIST
#define FLEETMARK_WEB_DIST ""
#endif

namespace fleetmark::http {
namespace {

constexpr char kSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

// Compares without an early exit, so response time does not reveal the prefix length.
bool SameSecret(std::string_view given, std::string_view expected) {
  if (expected.empty()) return false;
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  }
  return diff == 0;
}

// The query parameters of a request target (what follows '?'): each '&'-separated term
// split at its first '=' only, so an unencoded value that holds '=' stays whole
// (`recommend?profile=cpu_us=50,wait_us=2000`, as the CLI's --profile takes it; httplib's
// own params keep only the text after the last '='); names and values percent-decoded
// ('+' is a space); every term in order (Api::Get refuses a name given twice).
std::vector<std::pair<std::string, std::string>> QueryOf(const std::string& target) {
  std::vector<std::pair<std::string, std::string>> query;
  const size_t mark = target.find('?');
  if (mark == std::string::npos) return query;
  for (absl::string_view term : absl::StrSplit(absl::string_view(target).substr(mark + 1), '&', absl::SkipEmpty())) {
    const size_t eq = term.find('=');
    const std::string name(term.substr(0, eq));
    const std::string value(eq == absl::string_view::npos ? absl::string_view() : term.substr(eq + 1));
    query.emplace_back(httplib::detail::decode_url(name, true), httplib::detail::decode_url(value, true));
  }
  return query;
}

std::string Dump(const nlohmann::json& body) {
  // Agent-provided text may hold invalid UTF-8: replace it rather than throw.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Workers answer complete requests only (request_gate.h reads them): a worker waits for
// a database connection or for a slow client to take its response, never for a request.
constexpr int kWorkersPerConnection = 2;
constexpr int kKeepAliveTimeoutSeconds = 2;
constexpr int kMaxRequestsPerConnection = 100;
// A response's writes: at most this long without progress, and this long in all.
constexpr auto kWriteStall = std::chrono::seconds(5);
constexpr auto kWriteDeadline = std::chrono::seconds(60);

// Headers of every response, the gate's own refusals included.
const httplib::Headers& DefaultHeaders() {
  static const httplib::Headers* headers = new httplib::Headers{{"X-Content-Type-Options", "nosniff"},
                                                                {"Content-Security-Policy", kSecurityPolicy},
                                                                {"Referrer-Policy", "no-referrer"},
                                                                {"X-Frame-Options", "DENY"}};
  return *headers;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// A refusal the gate answers itself: the JSON error body of every other error, and
// the connection closed.
std::string GateResponse(int status, std::string_view error) {
  const std::string body = Dump({{"error", error}});
  std::string response = absl::StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status), "\r\n");
  for (const auto& [name, value] : DefaultHeaders()) absl::StrAppend(&response, name, ": ", value, "\r\n");
  absl::StrAppend(&response, "Content-Type: application/json\r\nContent-Length: ", body.size(),
                  "\r\nConnection: close\r\n\r\n", body);
  return response;
}

// One complete request (the gate read it) as cpp-httplib's input, and the connection's
// socket as its output: reads end with the request, writes wait for the client within
// kWriteStall / kWriteDeadline.
class RequestStream final : public httplib::Stream {
 public:
  RequestStream(int fd, std::string_view request)
      : fd_(fd), request_(request), deadline_(std::chrono::steady_clock::now() + kWriteDeadline) {}

  bool is_readable() const override { return offset_ < request_.size(); }
  bool is_writable() const override { return WaitWritable(); }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - offset_);
    std::memcpy(ptr, request_.data() + offset_, n);
    offset_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::send(fd_, ptr + done, size - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && WaitWritable()) {
        continue;
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(::getsockname, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  bool WaitWritable() const {
    const auto left =
        std::min<std::chrono::steady_clock::duration>(kWriteStall, deadline_ - std::chrono::steady_clock::now());
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    pollfd p{fd_, POLLOUT, 0};
    const int ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    return ::poll(&p, 1, ms) > 0 && (p.revents & POLLOUT) != 0;
  }
  template <typename Get>
  void Address(Get get, std::string& ip, int& port) const {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    port = 0;
    ip = get(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0 ? SocketAddressText(address, &port) : "";
  }

  const int fd_;
  const std::string_view request_;
  const std::chrono::steady_clock::time_point deadline_;
  size_t offset_ = 0;
};

// The routes and handlers, answering one request at a time handed over by the gate
// (cpp-httplib's own listener and its read loop are not used).
class Routes final : public httplib::Server {
 public:
  // Answers `request` on `fd`; true when the connection may carry another request.
  bool Answer(int fd, std::string_view request, bool last) {
    RequestStream stream(fd, request);
    bool connection_closed = false;
    response_says_close_ = false;
    const bool written = process_request(stream, last, connection_closed, nullptr);
    return written && !connection_closed && !response_says_close_;
  }
  // Called from the post-routing handler (the worker's thread).
  static void NoteResponse(const httplib::Response& res) {
    response_says_close_ = res.get_header_value("Connection") == "close";
  }

 private:
  static inline thread_local bool response_says_close_ = false;
};

// A listening TCP socket on host:port (port 0: any free one): SO_REUSEADDR only
// (cpp-httplib's SO_REUSEPORT would let a second coordinator share the port), dual-stack
// on IPv6. -1 when no address of `host` binds.
int ListenOn(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int yes = 1, no = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (a->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  int port = 0;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) SocketAddressText(address, &port);
  return port;
}

// Read-only: every other method than GET and HEAD is 405 with the methods that are
// allowed (RFC 9110 15.5.6).
void ReadOnly(const httplib::Request& req, httplib::Response& res) {
  res.status = 405;
  res.set_header("Allow", "GET, HEAD");
  res.set_content(Dump({{"error", absl::StrCat(req.method, " is not allowed: the web view is read-only (GET, HEAD)")}}),
                  "application/json");
}

// Why the request's Host header is malformed (RFC 9112 3.2: exactly one Host), or nullopt.
std::optional<std::string> RequestFramingProblem(const httplib::Request& req) {
  if (req.get_header_value_count("Host") > 1) return "Host: exactly one Host header is allowed (RFC 9112 3.2)";
  if (req.has_header("Host") && !HasValidHostPort(req.get_header_value("Host"))) {
    return absl::StrCat("Host: expected host or host:port with port 1..65535, got \"", req.get_header_value("Host"),
                        "\"");
  }
  // Content-Length: checked by the gate (request_framing.h) before the request got here.
  return std::nullopt;
}

// The error text of a response httplib answers itself, without a body: 414 for a
// request line over CPPHTTPLIB_REQUEST_URI_MAX_LENGTH, 413 for a body over the cap,
// 400 for a malformed request (the gate refuses the first two before httplib sees them).
std::string BuiltInErrorText(int status) {
  if (status == 414) return RequestLineTooLong(CPPHTTPLIB_REQUEST_URI_MAX_LENGTH);
  if (status == 413) return BodyTooLarge(RequestLimits{}.max_body);
  if (status == 400) return "malformed request";
  return absl::StrCat("HTTP status ", status);
}

class HttpServerImpl final : public HttpServer {
 public:
  HttpServerImpl(const HttpServerOptions& options, std::string host, std::string index_html,
                 std::shared_ptr<store::WebReader> reader)
      : options_(options),
        host_(std::move(host)),
        index_html_(std::move(index_html)),
        api_(std::move(reader), options.clock != nullptr ? *options.clock : SystemClock()) {}

  ~HttpServerImpl() override { Stop(); }

  absl::Status Start(int port) {
    // The gate reads requests; these settings shape the responses (the Keep-Alive
    // header) and the body of a POST that gets its 405.
    server_.set_keep_alive_timeout(kKeepAliveTimeoutSeconds);
    server_.set_keep_alive_max_count(kMaxRequestsPerConnection);
    server_.set_payload_max_length(RequestLimits{}.max_body);
    server_.set_default_headers(DefaultHeaders());
    // Whether the response closes the connection (a 400 of the pre-routing handler).
    server_.set_post_routing_handler(
        [](const httplib::Request&, httplib::Response& res) { Routes::NoteResponse(res); });
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      // Runs before httplib reads a body.
      if (std::optional<std::string> problem = RequestFramingProblem(req)) {
        res.status = 400;
        res.set_header("Connection", "close");
        res.set_content(Dump({{"error", *problem}}), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.method != "GET" && req.method != "HEAD" && !req.has_header("Content-Length") &&
          !req.has_header("Transfer-Encoding")) {
        // No body (RFC 9112 6.3): answer now; httplib would wait for the client to
        // close the connection to find the body's end.
        ReadOnly(req, res);
        return httplib::Server::HandlerResponse::Handled;
      }
      if (options_.bearer_token.empty() && !IsAllowedHostHeader(req.get_header_value("Host"))) {
        // DNS rebinding: a page of another site whose name now resolves to this
        // loopback address would read the token-less API as its own origin.
        res.status = 403;
        res.set_content(Dump({{"error", absl::StrCat("Host ", req.get_header_value("Host"),
                                                     " is not allowed: without a bearer token the web view answers "
                                                     "only localhost and IP addresses (set --http_token_file to "
                                                     "serve a host name)")}}),
                        "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (options_.bearer_token.empty() || !absl::StartsWith(req.path, "/api/")) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      if (SameSecret(BearerCredentials(req.get_header_value("Authorization")), options_.bearer_token)) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer realm=\"fleetmark\"");
      res.set_content(Dump({{"error", "a bearer token is required (Authorization: Bearer <token>)"}}),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    });
    server_.Get(R"(/api/v1/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
      ApiResponse response = api_.GetTerms(req.matches[1].str(), QueryOf(req.target));
      res.status = response.status;
      res.set_header("Cache-Control", "no-store");
      res.set_content(Dump(response.body), "application/json");
    });
    // Without their callbacks these paths are pages like any other (404).
    if (options_.health) {
      server_.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
        absl::StatusOr<int> schema = options_.health();
        res.status = schema.ok() ? 200 : 503;
        res.set_header("Cache-Control", "no-store");
        nlohmann::json body =
            schema.ok() ? nlohmann::json{{"status", "ok"}, {"database", "reachable"}, {"schema_version", *schema}}
                        : nlohmann::json{{"status", "unavailable"}, {"reason", schema.status().message()}};
        if (options_.read_server) body["reads"] = options_.read_server();
        res.set_content(Dump(body), "application/json");
      });
    }
    if (options_.metrics) {
      server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_header("Cache-Control", "no-store");
        res.set_content(options_.metrics(), metrics::kExpositionContentType);
      });
    }
    if (!server_.set_mount_point("/assets", options_.web_root + "/assets", {{"Cache-Control", "no-cache"}})) {
      return absl::FailedPreconditionError(absl::StrCat("web root ", options_.web_root, ": no assets/ folder"));
    }
    // Pages: the single-page app renders the route; the status tells crawlers and
    // tests whether the thing exists.
    server_.Get(R"(/(fleet|runs|compare|map|recommend|history)?/?)",
                [this](const httplib::Request&, httplib::Response& res) { Page(res, 200); });
    server_.Get(R"(/runs/([^/]+)/?)", [this](const httplib::Request& req, httplib::Response& res) {
      // As the API's runs/<id>: a unique prefix is the run's page, an ambiguous one a
      // page listing the matches (300 Multiple Choices), none a not-found page (404).
      auto matches = api_.reader().RunIdsWithPrefix(req.matches[1].str(), 2);
      absl::Status status = matches.status();
      if (matches.ok() && matches->empty()) status = absl::NotFoundError("no such run");
      if (matches.ok() && matches->size() > 1) return Page(res, 300);
      if (status.ok()) status = api_.reader().GetRun(matches->front()).status();
      // A page: a malformed id names no page either (404); the API says 400 with the form.
      Page(res, status.ok() ? 200 : absl::IsNotFound(status) || absl::IsInvalidArgument(status) ? 404 : 503);
    });
    server_.Get(R"(/.*)", [this](const httplib::Request&, httplib::Response& res) { Page(res, 404); });
    // Read-only: every other method is 405 with the methods that are allowed (RFC 9110 15.5.6).
    const auto read_only = [](const httplib::Request& req, httplib::Response& res) { ReadOnly(req, res); };
    server_.Post(R"(/.*)", read_only);
    server_.Put(R"(/.*)", read_only);
    server_.Patch(R"(/.*)", read_only);
    server_.Delete(R"(/.*)", read_only);
    // Errors httplib answers itself (414 for a request line over
    // CPPHTTPLIB_REQUEST_URI_MAX_LENGTH, 400 for a malformed one) carry no body: give
    // them the JSON error body of every other error. Bodies set above are kept.
    server_.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      res.set_content(Dump({{"error", BuiltInErrorText(res.status)}}), "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }));
    server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      res.status = 500;
      res.set_content(Dump({{"error", "internal error"}}), "application/json");
    });

    const int listen_fd = ListenOn(host_, port);
    if (listen_fd < 0) return absl::UnavailableError(absl::StrCat("http: cannot listen on ", options_.address));
    port_ = BoundPort(listen_fd);
    RequestGate::Options gate;
    gate.keep_alive_idle = absl::Seconds(kKeepAliveTimeoutSeconds);
    gate.max_requests_per_connection = kMaxRequestsPerConnection;
    gate.max_connections = options_.max_connections;
    gate.max_connections_per_client = options_.max_connections_per_client;
    gate.workers = kWorkersPerConnection * options_.threads;
    FLEETMARK_ASSIGN_OR_RETURN(
        gate_, RequestGate::Start(
                   listen_fd, gate,
                   [this](int fd, std::string_view request, bool last) { return server_.Answer(fd, request, last); },
                   GateResponse));
    return absl::OkStatus();
  }

  int port() const override { return port_; }

  std::string web_root() const override { return options_.web_root; }

  std::string url() const override {
    const bool v6 = host_.find(':') != std::string::npos;
    return absl::StrCat("http://", v6 ? "[" : "", host_, v6 ? "]" : "", ":", port_, "/");
  }

  void Stop() override {
    if (stopped_.exchange(true)) return;
    if (gate_ != nullptr) gate_->Stop();
  }

 private:
  void Page(httplib::Response& res, int status) {
    res.status = status;
    res.set_header("Cache-Control", "no-cache");
    res.set_content(index_html_, "text/html; charset=utf-8");
  }

  const HttpServerOptions options_;
  const std::string host_;
  const std::string index_html_;
  Api api_;
  Routes server_;
  std::unique_ptr<RequestGate> gate_;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
};

}  // namespace

std::string_view BearerCredentials(std::string_view header_view) {
  const absl::string_view header(header_view.data(), header_view.size());
  const size_t space = header.find(' ');
  if (space == absl::string_view::npos || !absl::EqualsIgnoreCase(header.substr(0, space), "Bearer")) return {};
  const size_t token = header.find_first_not_of(' ', space);
  if (token == absl::string_view::npos) return {};
  return std::string_view(header.data() + token, header.size() - token);
}

int HttpDescriptors(const HttpServerOptions& options, int readers) {
  return options.threads * readers + options.max_connections;
}

std::vector<std::string> DefaultWebRoots() {
  std::vector<std::string> roots;
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) roots.push_back((exe.parent_path().parent_path() / "share" / "fleetmark" / "web").string());
  if (std::string_view(FLEETMARK_WEB_DIST) != "") roots.push_back(FLEETMARK_WEB_DIST);
  return roots;
}

bool IsLoopbackHost(std::string_view host_view) {
  const absl::string_view host(host_view.data(), host_view.size());
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

bool IsAllowedHostHeader(std::string_view header_view) {
  const absl::string_view header(header_view.data(), header_view.size());
  if (header.empty()) return true;      // HTTP/1.0 without Host: not a browser
  if (absl::StartsWith(header, "[")) {  // [IPv6] or [IPv6]:port
    const size_t close = header.find(']');
    if (close == absl::string_view::npos) return false;
    const std::string literal(header.substr(1, close - 1));
    in6_addr address6;
    return ::inet_pton(AF_INET6, literal.c_str(), &address6) == 1 &&
           (close + 1 == header.size() || header[close + 1] == ':');
  }
  absl::string_view host = header;
  if (const size_t colon = header.rfind(':'); colon != absl::string_view::npos) host = header.substr(0, colon);
  const std::string name = absl::AsciiStrToLower(host);
  in_addr address4;
  return name == "localhost" || ::inet_pton(AF_INET, name.c_str(), &address4) == 1;
}

bool HasValidHostPort(std::string_view header_view) {
  const absl::string_view header(header_view.data(), header_view.size());
  size_t colon = absl::string_view::npos;
  if (absl::StartsWith(header, "[")) {
    const size_t close = header.find(']');
    if (close == absl::string_view::npos) return false;
    if (close + 1 == header.size()) return true;
    if (header[close + 1] != ':') return false;
    colon = close + 1;
  } else {
    colon = header.rfind(':');
    if (colon == absl::string_view::npos) return true;
  }
  const absl::string_view port = header.substr(colon + 1);
  int value = 0;
  return !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), absl::ascii_isdigit) &&
         absl::SimpleAtoi(port, &value) && value >= 1 && value <= 65535;
}

absl::Status ValidateHttpServerOptions(const HttpServerOptions& options) {
  FLEETMARK_ASSIGN_OR_RETURN(auto host_port, ParseHostPort(options.address));
  if (options.threads < 1 || options.threads > 256) {
    return absl::InvalidArgumentError(absl::StrCat("http threads: 1..256, got ", options.threads));
  }
  if (options.max_connections < 1 || options.max_connections > 65536) {
    return absl::InvalidArgumentError(absl::StrCat("http max connections: 1..65536, got ", options.max_connections));
  }
  if (options.max_connections_per_client < 1 || options.max_connections_per_client > options.max_connections) {
    return absl::InvalidArgumentError(absl::StrCat("http max connections per client: 1..max connections (",
                                                   options.max_connections, "), got ",
                                                   options.max_connections_per_client));
  }
  const std::string& token = options.bearer_token;
  if (!token.empty()) FLEETMARK_RETURN_IF_ERROR(CheckSecretText("http bearer token", token));  // "" = none
  if (!IsLoopbackHost(host_port.first) && token.empty() && !options.allow_insecure_remote) {
    return absl::InvalidArgumentError(absl::StrCat("http address ", options.address,
                                                   " is not loopback: set a bearer token (or allow_insecure_remote)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HttpServer>> StartHttpServer(const HttpServerOptions& options,
                                                            std::shared_ptr<store::WebReader> reader) {
  FLEETMARK_RETURN_IF_ERROR(ValidateHttpServerOptions(options));
  FLEETMARK_ASSIGN_OR_RETURN(auto host_port, ParseHostPort(options.address));
  if (reader == nullptr) return absl::InvalidArgumentError("http: reader must not be null");
  HttpServerOptions resolved = options;
  if (resolved.web_root.empty()) {
    const std::vector<std::string> roots = DefaultWebRoots();
    for (const std::string& root : roots) {
      if (std::ifstream(root + "/index.html").good()) {
        resolved.web_root = root;
        break;
      }
    }
    if (resolved.web_root.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("no web view: none of ", absl::StrJoin(roots, ", "),
                                                        " holds an index.html (build the fleetmark_web target)"));
    }
  }
  std::ifstream in(resolved.web_root + "/index.html", std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("web root \"", resolved.web_root, "\": no index.html (build the fleetmark_web target)"));
  }
  std::stringstream index;
  index << in.rdbuf();
  auto server = std::make_unique<HttpServerImpl>(resolved, host_port.first, index.str(), std::move(reader));
  FLEETMARK_RETURN_IF_ERROR(server->Start(host_port.second));
  return std::unique_ptr<HttpServer>(std::move(server));
}

namespace {

// The PostgreSQL reader on `uri`, one connection per server thread.
absl::StatusOr<std::unique_ptr<store::WebReader>> OpenReader(const HttpServerOptions& options, const std::string& uri,
                                                             bool connect_at_open) {
  store::WebReaderOptions reader_options;
  reader_options.uri = uri;
  reader_options.pool_size = std::clamp(options.threads, 1, 256);
  reader_options.connect_at_open = connect_at_open;
  return store::OpenPgWebReader(reader_options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> StartHttpServer(const HttpServerOptions& options) {
  FLEETMARK_RETURN_IF_ERROR(ValidateHttpServerOptions(options));  // before opening the database
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<store::WebReader> reader, OpenReader(options, options.pg_uri, true));
  return StartHttpServer(options, std::shared_ptr<store::WebReader>(std::move(reader)));
}

absl::StatusOr<std::unique_ptr<HttpServer>> StartRoutedHttpServer(const HttpServerOptions& options,
                                                                  const std::string& replica_uri,
                                                                  store::ReadRouter& router) {
  FLEETMARK_RETURN_IF_ERROR(ValidateHttpServerOptions(options));
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<store::WebReader> primary, OpenReader(options, options.pg_uri, true));
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<store::WebReader> replica, OpenReader(options, replica_uri, false));
  return StartHttpServer(options, std::shared_ptr<store::WebReader>(
                                      store::MakeRoutedWebReader(std::move(primary), std::move(replica), router)));
}

}  // namespace fleetmark::http
