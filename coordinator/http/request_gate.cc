#include "coordinator/http/request_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace fleetmark::http {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr size_t kReadChunk = 16 * 1024;
constexpr auto kSweepPeriod = std::chrono::milliseconds(50);
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

Clock::duration ToChrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

// Where a connection is; the gate's loop thread owns every phase but kHandling.
enum class Phase {
  kLingering,  // refused: discarding what the client still sends, then closed
  kWaiting,    // no byte of its next request yet
  kReading,    // part of a request received
  kHandling,   // a complete request is with a worker (not in the epoll set)
};

struct Connection {
  uint64_t id = 0;
  int fd = -1;
  std::string client;  // the peer's address, the per-client cap's key
  Phase phase = Phase::kWaiting;
  Clock::time_point since;     // when the phase began (eviction picks the oldest)
  Clock::time_point deadline;  // end of the phase (kWaiting, kReading, kLingering)
  bool first_request = true;
  int served = 0;
  size_t discarded = 0;  // kLingering
  std::string buffer;    // bytes received and not yet handed to a worker
};

class Gate final : public RequestGate {
 public:
  Gate(int listen_fd, const Options& options, Handler handler, ErrorResponse error_response)
      : listen_fd_(listen_fd),
        options_(options),
        handler_(std::move(handler)),
        error_response_(std::move(error_response)) {}

  ~Gate() override { Stop(); }

  absl::Status Start() {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd_ < 0 || wake_fd_ < 0) {
      return absl::InternalError(absl::StrCat("http: epoll/eventfd: ", std::strerror(errno)));
    }
    fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
    Watch(listen_fd_, kListenId, EPOLL_CTL_ADD);
    Watch(wake_fd_, kWakeId, EPOLL_CTL_ADD);
    for (int i = 0; i < std::max(1, options_.workers); ++i) workers_.emplace_back([this] { Work(); });
    loop_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }

  void Stop() override {
    if (stopped_.exchange(true)) return;
    Wake();
    if (loop_.joinable()) loop_.join();
    {
      absl::MutexLock lock(&jobs_mu_);
      jobs_stopping_ = true;
      jobs_.clear();  // not started: closed below unanswered
    }
    for (std::thread& t : workers_) t.join();
    for (auto& [id, connection] : connections_) ::close(connection->fd);
    connections_.clear();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    listen_fd_ = epoll_fd_ = wake_fd_ = -1;
  }

 private:
  struct Job {
    uint64_t id;
    int fd;
    std::string request;
    bool last;
  };

  void Watch(int fd, uint64_t id, int op) {
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.u64 = id;
    epoll_ctl(epoll_fd_, op, fd, &event);
  }

  void Wake() {
    const uint64_t one = 1;
    if (wake_fd_ >= 0) [[maybe_unused]]
      ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }

  void Loop() {
    std::vector<epoll_event> events(256);
    Clock::time_point last_sweep = Clock::now();
    while (!stopped_.load()) {
      const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                               static_cast<int>(std::chrono::milliseconds(kSweepPeriod).count()));
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        if (id == kListenId) {
          AcceptAll();
        } else if (id == kWakeId) {
          uint64_t count = 0;
          [[maybe_unused]] ssize_t r = ::read(wake_fd_, &count, sizeof(count));
          TakeBackConnections();
        } else if (auto it = connections_.find(id); it != connections_.end()) {
          OnReadable(*it->second);
        }
      }
      const Clock::time_point now = Clock::now();
      if (now - last_sweep >= kSweepPeriod) {
        Sweep(now);
        last_sweep = now;
      }
    }
  }

  void AcceptAll() {
    while (true) {
      sockaddr_storage address{};
      socklen_t length = sizeof(address);
      const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO || errno == EPERM) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: make room from the idle, else stop accepting for a while.
          if (Connection* victim = Victim(nullptr); victim != nullptr) {
            Close(*victim);
            continue;
          }
          PauseAccepting();
        }
        return;  // EAGAIN: accepted all there were
      }
      int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      Admit(fd, SocketAddressText(address, nullptr));
    }
  }

  void PauseAccepting() {
    if (accept_paused_) return;
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
    accept_paused_ = true;
    accept_resume_ = Clock::now() + kAcceptPause;
  }

  void ResumeAccepting() {
    if (!accept_paused_) return;
    accept_paused_ = false;
    Watch(listen_fd_, kListenId, EPOLL_CTL_ADD);
  }

  // A new connection within the caps, making room by closing the oldest connection
  // that is not being answered: of this client at its cap, of the client holding the
  // most at the total cap.
  void Admit(int fd, std::string client) {
    if (per_client_[client] >= options_.max_connections_per_client) {
      Connection* victim = Victim(&client);
      if (victim == nullptr) return RefuseNew(fd, client);
      Close(*victim);
    }
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      std::string busiest;
      int most = 0;
      for (const auto& [name, count] : per_client_) {
        if (count > most) most = count, busiest = name;
      }
      Connection* victim = Victim(&busiest);
      if (victim == nullptr) victim = Victim(nullptr);
      if (victim == nullptr) return RefuseNew(fd, client);
      Close(*victim);
    }
    auto connection = std::make_unique<Connection>();
    connection->id = next_id_++;
    connection->fd = fd;
    connection->client = std::move(client);
    connection->since = Clock::now();
    connection->deadline = connection->since + ToChrono(options_.request_deadline);
    ++per_client_[connection->client];
    Watch(fd, connection->id, EPOLL_CTL_ADD);
    connections_.emplace(connection->id, std::move(connection));
  }

  void RefuseNew(int fd, const std::string& client) {
    if (per_client_[client] == 0) per_client_.erase(client);
    const std::string response =
        error_response_(503, "too many connections: every connection is answering a request; try again");
    [[maybe_unused]] ssize_t n = ::send(fd, response.data(), response.size(), MSG_NOSIGNAL);
    ::close(fd);
  }

  // The connection to close for room: of `client` (all clients when null), the
  // longest in the first of lingering, waiting, reading; null when every one is being
  // answered.
  Connection* Victim(const std::string* client) {
    Connection* best = nullptr;
    for (auto& [id, c] : connections_) {
      if (c->phase == Phase::kHandling || (client != nullptr && c->client != *client)) continue;
      if (best == nullptr || c->phase < best->phase || (c->phase == best->phase && c->since < best->since)) {
        best = c.get();
      }
    }
    return best;
  }

  void Close(Connection& connection) {
    if (connection.phase != Phase::kHandling) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection.fd, nullptr);
    ::close(connection.fd);
    if (--per_client_[connection.client] <= 0) per_client_.erase(connection.client);
    connections_.erase(connection.id);  // destroys `connection`
    ResumeAccepting();
  }

  void OnReadable(Connection& connection) {
    char chunk[kReadChunk];
    bool eof = false;
    while (true) {
      const ssize_t n = ::recv(connection.fd, chunk, sizeof(chunk), 0);
      if (n > 0) {
        if (connection.phase == Phase::kLingering) {
          connection.discarded += static_cast<size_t>(n);
          if (connection.discarded > kLingerBytes) return Close(connection);
          continue;
        }
        connection.buffer.append(chunk, static_cast<size_t>(n));
        // Never more than one refused or complete request plus a chunk (FrameRequest
        // decides within max_head + max_body bytes).
        if (connection.buffer.size() > options_.limits.max_head + options_.limits.max_body) break;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      eof = true;  // closed by the client (0) or an error
      break;
    }
    if (connection.phase == Phase::kLingering) {
      if (eof) Close(connection);
      return;
    }
    if (connection.phase == Phase::kWaiting && !connection.buffer.empty()) {
      connection.phase = Phase::kReading;
      connection.since = Clock::now();
      // A connection's first request counts from the accept, a later one from its first byte.
      if (!connection.first_request) connection.deadline = connection.since + ToChrono(options_.request_deadline);
    }
    if (!Frame(connection, eof) && eof) Close(connection);
  }

  // Hands a complete request to a worker or answers a refusal; true when it did either.
  bool Frame(Connection& connection, bool eof) {
    if (connection.buffer.empty()) return false;
    const RequestFraming framing = FrameRequest(connection.buffer, options_.limits);
    if (framing.state == RequestFraming::kIncomplete) return false;
    if (framing.state == RequestFraming::kRefused) {
      Refuse(connection, framing.status, framing.error, /*linger=*/!eof);
      return true;
    }
    Job job{connection.id, connection.fd, connection.buffer.substr(0, framing.size()),
            eof || connection.served + 1 >= options_.max_requests_per_connection};
    connection.buffer.erase(0, framing.size());
    connection.phase = Phase::kHandling;
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection.fd, nullptr);
    {
      absl::MutexLock lock(&jobs_mu_);
      jobs_.push_back(std::move(job));
    }
    return true;
  }

  // Answers `status` and closes: after discarding what the client still sends for a
  // while (so it reads the answer instead of a reset), or at once.
  void Refuse(Connection& connection, int status, std::string_view error, bool linger) {
    const std::string response = error_response_(status, error);
    [[maybe_unused]] ssize_t n = ::send(connection.fd, response.data(), response.size(), MSG_NOSIGNAL);
    if (!linger) return Close(connection);
    ::shutdown(connection.fd, SHUT_WR);
    connection.phase = Phase::kLingering;
    connection.buffer.clear();
    connection.buffer.shrink_to_fit();
    connection.since = Clock::now();
    connection.deadline = connection.since + kLingerTime;
  }

  void Sweep(Clock::time_point now) {
    std::vector<Connection*> expired;
    for (auto& [id, c] : connections_) {
      if (c->phase != Phase::kHandling && now >= c->deadline) expired.push_back(c.get());
    }
    for (Connection* c : expired) {
      if (c->phase == Phase::kReading) {
        Refuse(*c, 408,
               absl::StrCat("request not received whole within ", absl::FormatDuration(options_.request_deadline)),
               /*linger=*/false);
      } else {
        Close(*c);  // idle, or done lingering
      }
    }
    if (accept_paused_ && now >= accept_resume_) ResumeAccepting();
  }

  // Connections whose request a worker answered: closed, or waiting for the next one.
  void TakeBackConnections() {
    std::vector<std::pair<uint64_t, bool>> returned;
    {
      absl::MutexLock lock(&returned_mu_);
      returned.swap(returned_);
    }
    for (const auto& [id, keep] : returned) {
      auto it = connections_.find(id);
      if (it == connections_.end()) continue;
      Connection& connection = *it->second;
      if (!keep) {
        Close(connection);
        continue;
      }
      ++connection.served;
      connection.first_request = false;
      connection.since = Clock::now();
      if (connection.buffer.empty()) {
        connection.phase = Phase::kWaiting;
        connection.deadline = connection.since + ToChrono(options_.keep_alive_idle);
      } else {  // pipelined: the next request began already
        connection.phase = Phase::kReading;
        connection.deadline = connection.since + ToChrono(options_.request_deadline);
      }
      Watch(connection.fd, connection.id, EPOLL_CTL_ADD);
      Frame(connection, /*eof=*/false);
    }
  }

  void Work() {
    while (true) {
      Job job;
      {
        absl::MutexLock lock(&jobs_mu_);
        auto has_job = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(jobs_mu_) { return jobs_stopping_ || !jobs_.empty(); };
        jobs_mu_.Await(absl::Condition(&has_job));
        if (jobs_stopping_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      bool keep = false;
      try {
        keep = handler_(job.fd, job.request, job.last) && !job.last;
      } catch (...) {
        keep = false;  // the handler catches its own; never take the server down
      }
      {
        absl::MutexLock lock(&returned_mu_);
        returned_.emplace_back(job.id, keep);
      }
      Wake();
    }
  }

  int listen_fd_;
  const Options options_;
  const Handler handler_;
  const ErrorResponse error_response_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stopped_{false};
  std::thread loop_;
  std::vector<std::thread> workers_;

  // Loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  std::map<std::string, int> per_client_;
  uint64_t next_id_ = 2;  // 0 and 1 are the listening socket and the eventfd
  bool accept_paused_ = false;
  Clock::time_point accept_resume_;

  absl::Mutex jobs_mu_;
  std::deque<Job> jobs_ ABSL_GUARDED_BY(jobs_mu_);
  bool jobs_stopping_ ABSL_GUARDED_BY(jobs_mu_) = false;

  absl::Mutex returned_mu_;
  std::vector<std::pair<uint64_t, bool>> returned_ ABSL_GUARDED_BY(returned_mu_);
};

}  // namespace

std::string SocketAddressText(const sockaddr_storage& address, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  int number = 0;
  if (address.ss_family == AF_INET) {
    const auto* in4 = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in4->sin_addr, text, sizeof(text));
    number = ntohs(in4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    }
    number = ntohs(in6->sin6_port);
  }
  if (port != nullptr) *port = number;
  return text;
}

absl::StatusOr<std::unique_ptr<RequestGate>> RequestGate::Start(int listen_fd, const Options& options, Handler handler,
                                                                ErrorResponse error_response) {
  auto gate = std::make_unique<Gate>(listen_fd, options, std::move(handler), std::move(error_response));
  if (absl::Status started = gate->Start(); !started.ok()) return started;
  return std::unique_ptr<RequestGate>(std::move(gate));
}

}  // namespace fleetmark::http
