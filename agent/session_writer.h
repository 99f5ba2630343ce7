// The outbound half of one session: a queue of messages drained by a writer thread,
// heartbeats once welcomed, and the welcome timeout. Spooled results are queued by id
// and read back from the spool when written, so a long replay holds no result in
// memory. Time is read from the injected Clock (engine/common/clock.h): its steady
// time for the heartbeat interval and the welcome timeout (a wall-clock step neither
// stops nor bunches heartbeats), its wall clock for the heartbeat's stamp.
//
//   SessionWriter writer(&stream, &spool, clock, clock.SteadyNow() + welcome_timeout, on_sent);
//   stream.Write(hello);  writer.Start();
//   writer.SetWelcomed(absl::Seconds(10));  writer.Enqueue(result_id);
//   ...  writer.Close();  writer.Join();
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/spool.h"
#include "agent/transport.h"
#include "engine/common/clock.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark::agent {

// Thread-safe: Enqueue, SetWelcomed and Close from any thread; Start and Join from the
// owner's thread, once each.
class SessionWriter {
 public:
  // A queued message, or the id of a spooled result.
  using Outbound = std::variant<fleetmark::v1::AgentMessage, std::string>;

  // `stream`, `spool` and `clock` are not owned and must outlive the writer. Without a
  // SetWelcomed before `welcome_deadline` (by `clock`'s SteadyNow), the writer cancels the stream.
  // `on_result_sent` runs on the writer thread after each result written.
  SessionWriter(SessionStream* stream, const Spool* spool, const Clock& clock, absl::Time welcome_deadline,
                std::function<void()> on_result_sent);
  // Closes and joins.
  ~SessionWriter();
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;

  // Queues `item` (FIFO); dropped after Close.
  void Enqueue(Outbound item);
  // Heartbeats from now on, the first at once (fresh RSS/CPU/spool figures), then every
  // `heartbeat_interval`.
  void SetWelcomed(absl::Duration heartbeat_interval);
  // Starts the writer thread (after the hello was written: it must go first).
  void Start();
  // Drops the queue; the writer thread ends after the write in progress.
  void Close();
  // Waits for the writer thread (if started).
  void Join();

 private:
  void WriterLoop();
  fleetmark::v1::AgentMessage MakeHeartbeat() const;

  SessionStream* const stream_;
  const Spool* const spool_;
  const Clock& clock_;
  const absl::Time welcome_deadline_;
  const std::function<void()> on_result_sent_;
  std::thread writer_;

  absl::Mutex mu_;
  std::deque<Outbound> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool welcomed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_);
  absl::Time next_heartbeat_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::agent
