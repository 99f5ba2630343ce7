// A coordinator's ear on the database: one dedicated PostgreSQL connection, on its own
// thread, that `LISTEN`s on kNotificationChannel (notification.h) and hands each
// notification other coordinators' (and its own) transactions sent to a handler. When
// the connection breaks (a database outage, `pg_terminate_backend`) it reconnects with
// backoff (agent/backoff.h: full jitter, 100 ms .. 5 s) and calls `on_listening` again:
// notifications sent meanwhile are lost, so the caller runs a sweep then.
//
//   NotificationListener::Options options;
//   options.connection = store_options.connection;  // uri, application_name
//   auto listener = NotificationListener::Start(options,
//       [&](const Notification& n) { ... },          // listener thread; must not block
//       [&](bool reconnected) { RequestSweep(); });  // listener thread, after each LISTEN
//   ...
//   listener.reset();  // stops within milliseconds, also while the database is down
//                      // (a connect in progress to a host that never answers: at most
//                      // libpq's connect_timeout, 10 s, as the pool's connections)
//
// The connection's socket gets TCP keepalives (idle 10 s, 3 probes 5 s apart), so a
// database host that vanished without closing the connection is noticed in ~25 s.
// Payloads that do not parse are logged (the first few) and dropped.
//
// Thread-safety: the handlers run on the listener's thread, one at a time; listening()
// and the counters may be read from any thread; the destructor joins the thread (call it
// from another thread than the handlers').
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

#include "agent/backoff.h"
#include "coordinator/store/connection_options.h"
#include "coordinator/store/notification.h"

namespace fleetmark::store {

class NotificationListener {
 public:
  struct Options {
    ConnectionOptions connection;  // uri and application_name (pool_size is ignored)
    agent::BackoffOptions backoff{
        .initial_delay = absl::Milliseconds(100), .max_delay = absl::Seconds(5), .min_delay = absl::Milliseconds(50)};
  };
  using Handler = std::function<void(const Notification&)>;
  // After each successful LISTEN: false the first time, true after a reconnect.
  using OnListening = std::function<void(bool reconnected)>;

  // Starts the thread, which connects at once (and keeps retrying while it cannot).
  // InvalidArgument for an empty uri or bad backoff options (naming the field).
  static absl::StatusOr<std::unique_ptr<NotificationListener>> Start(Options options, Handler handler,
                                                                     OnListening on_listening);
  // Stops the thread (closing the connection without a round trip) and joins it.
  ~NotificationListener();

  // Whether the LISTEN connection is up now.
  bool listening() const { return listening_.load(); }
  // Notifications handed to the handler (parsed), payloads dropped as malformed, and
  // reconnects after a lost connection, since Start.
  uint64_t received() const { return received_.load(); }
  uint64_t malformed() const { return malformed_.load(); }
  uint64_t reconnects() const { return reconnects_.load(); }

 private:
  NotificationListener(Options options, Handler handler, OnListening on_listening, int wake_fd);
  void Run();
  // One connection's life: connect, LISTEN, deliver until it breaks or Stop. Returns
  // whether it got as far as LISTEN.
  bool ListenOnce(bool reconnected);
  // Sleeps `delay` or until stopped; returns false when stopped.
  bool Pause(absl::Duration delay);
  void Deliver(const std::string& payload);

  class Receiver;
  const Options options_;
  const Handler handler_;
  const OnListening on_listening_;
  const int wake_fd_;  // eventfd: written once by the destructor
  std::atomic<bool> stopping_{false};
  std::atomic<bool> listening_{false};
  std::atomic<uint64_t> received_{0}, malformed_{0}, reconnects_{0};
  int failed_connects_ = 0;  // in a row; listener thread only
  std::thread thread_;
};

}  // namespace fleetmark::store
