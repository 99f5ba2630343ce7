#include "coordinator/store/notification_listener.h"
#include "engine/common/steady_wait.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <pqxx/pqxx>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "coordinator/store/connection_pool.h"
#include "engine/common/log.h"

namespace fleetmark::store {
namespace {

// Malformed payloads logged at most (the rest are only counted).
constexpr uint64_t kMalformedLogged = 5;

// TCP keepalive on the listener's socket (libpq's default idle time is the kernel's,
// 2 hours): a silent peer is declared dead after 10 + 3 x 5 s. No-op for a Unix socket.
void SetKeepalive(int fd) {
  const int on = 1, idle_s = 10, interval_s = 5, count = 3;
  (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

}  // namespace

// Issues LISTEN on construction; passes each payload to the listener.
class NotificationListener::Receiver : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection_base& conn, NotificationListener* listener)
      : pqxx::notification_receiver(conn, kNotificationChannel), listener_(listener) {}
  void operator()(const std::string& payload, int) override { listener_->Deliver(payload); }

 private:
  NotificationListener* const listener_;
};

absl::StatusOr<std::unique_ptr<NotificationListener>> NotificationListener::Start(Options options, Handler handler,
                                                                                  OnListening on_listening) {
  if (options.connection.uri.empty()) return absl::InvalidArgumentError("database uri: must not be empty");
  if (absl::Status backoff = agent::ValidateBackoffOptions(options.backoff); !backoff.ok()) return backoff;
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    return absl::InternalError(absl::StrCat("notification listener: eventfd: ", std::strerror(errno)));
  }
  std::unique_ptr<NotificationListener> listener(
      new NotificationListener(std::move(options), std::move(handler), std::move(on_listening), wake_fd));
  listener->thread_ = std::thread([l = listener.get()] { l->Run(); });
  return listener;
}

NotificationListener::NotificationListener(Options options, Handler handler, OnListening on_listening, int wake_fd)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      on_listening_(std::move(on_listening)),
      wake_fd_(wake_fd) {}

NotificationListener::~NotificationListener() {
  stopping_.store(true);
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  close(wake_fd_);
}

void NotificationListener::Run() {
  absl::BitGen gen;
  agent::Backoff backoff(options_.backoff, absl::BitGenRef(gen));
  bool listened_before = false;
  while (!stopping_.load()) {
    if (ListenOnce(listened_before)) {
      listened_before = true;
      backoff.Reset();
    }
    if (!Pause(backoff.NextDelay())) return;
  }
}

bool NotificationListener::Pause(absl::Duration delay) {
  pollfd wake{.fd = wake_fd_, .events = POLLIN, .revents = 0};
  const absl::Time until = SteadyNow() + delay;
  while (!stopping_.load()) {
    const int64_t ms = absl::ToInt64Milliseconds(until - SteadyNow());
    if (ms <= 0) return true;
    (void)poll(&wake, 1, static_cast<int>(ms));
  }
  return false;
}

bool NotificationListener::ListenOnce(bool reconnected) {
  absl::StatusOr<std::unique_ptr<pqxx::connection>> conn = ConnectionPool::Connect(options_.connection);
  if (!conn.ok()) {
    // Once per outage: the retries follow every few seconds.
    if (failed_connects_++ == 0) {
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                       absl::StrCat("notification listener: ", conn.status().message(), "; retrying with backoff"));
    }
    return false;
  }
  failed_connects_ = 0;
  bool listened = false;
  std::unique_ptr<Receiver> receiver;
  try {
    receiver = std::make_unique<Receiver>(**conn, this);  // LISTEN
    listened = true;
    listening_.store(true);
    if (reconnected) {
      reconnects_.fetch_add(1);
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo, "notification listener: listening again");
    }
    if (on_listening_) on_listening_(reconnected);
    const int sock = (*conn)->sock();
    if (sock < 0) throw pqxx::broken_connection("no socket");
    SetKeepalive(sock);
    while (!stopping_.load()) {
      pollfd fds[2] = {{.fd = sock, .events = POLLIN, .revents = 0}, {.fd = wake_fd_, .events = POLLIN, .revents = 0}};
      if (poll(fds, 2, -1) < 0 && errno != EINTR) throw pqxx::broken_connection(std::strerror(errno));
      if (stopping_.load()) break;
      if (fds[0].revents != 0) {
        (*conn)->get_notifs();  // throws broken_connection when the server closed it
        if (!(*conn)->is_open()) throw pqxx::broken_connection("connection closed");
      }
    }
  } catch (const std::exception& e) {
    if (!stopping_.load()) {
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                       absl::StrCat("notification listener: connection lost (", e.what(),
                                    "); reconnecting, then sweeping for what was missed"));
    }
  }
  listening_.store(false);
  // Closed first: the receiver's destructor then forgets its channel without an UNLISTEN
  // (which could try to reconnect to a database that is down).
  (*conn)->disconnect();
  receiver.reset();
  return listened;
}

void NotificationListener::Deliver(const std::string& payload) {
  absl::StatusOr<Notification> n = ParseNotification(payload);
  if (!n.ok()) {
    if (malformed_.fetch_add(1) < kMalformedLogged) {
      ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                       absl::StrCat("notification listener: dropped: ", n.status().message()));
    }
    return;
  }
  received_.fetch_add(1);
  handler_(*n);
}

}  // namespace fleetmark::store
