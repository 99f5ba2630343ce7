// One agent's bidirectional stream (AgentService.Connect) on the gRPC callback API.
//
// AgentStream is the ServerBidiReactor gRPC drives; it is deleted in OnDone.
// AgentSession is the shared, thread-safe handle the rest of the coordinator keeps
// (registry, dispatcher, ingestor acks); it outlives the reactor and turns into a
// no-op once the stream is done. Rules kept here (gRPC's callback API; docs/architecture.md, "Coordinator"):
//   - at most one read and one write in flight; further messages wait in an outbound
//     queue;
//   - Finish exactly once, after the queued writes drained (a Refusal is delivered
//     before the stream ends);
//   - gRPC operations are started outside the session's lock, by one thread at a time
//     (a reaction may run inline inside StartWrite/StartRead), and never after Finish.
// The next read starts only when the handler asks for it (ReadNext), so each agent's
// messages are handled in order, one at a time, off the gRPC threads.
// The stream carries raw bytes (AgentService's Connect is registered raw): messages are
// parsed and serialised here, so an inbound message protobuf cannot parse is told
// apart from the agent closing its side. It is refused (Refusal, INVALID_ARGUMENT
// naming fleetmark.v1.AgentMessage); gRPC's typed reactor reported both as a failed
// read, and the stream ended with OK and no reason.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fleetmark/v1/agent.grpc.pb.h"

namespace fleetmark::service {

class AgentStream;

// Entries of one ResultAcks message at most: a full batch of short acks is ~60 KiB, of
// acks carrying a rejection message (<= 1 KiB each) under 1 MiB.
inline constexpr int kMaxAcksPerMessage = 1000;

class AgentSession : public std::enable_shared_from_this<AgentSession> {
 public:
  // Receives each inbound message (on a gRPC thread: must return at once) and, once,
  // the end of the stream (after OnDone).
  struct Handlers {
    std::function<void(std::shared_ptr<AgentSession>, v1::AgentMessage)> on_message;
    std::function<void(std::shared_ptr<AgentSession>)> on_done;
  };

  AgentSession(std::string session_id, std::string peer);

  // Queues `message` for the agent. Dropped once the stream is closing.
  void Send(v1::CoordinatorMessage message);
  // Queues one result's ack. With `batched` (the agent announced
  // CAPABILITY_RESULT_ACKS) acks queued while a write is in flight are coalesced into
  // one ResultAcks message of at most kMaxAcksPerMessage entries, in order; else each is
  // its own ResultAck message. Dropped once the stream is closing.
  void SendResultAck(v1::ResultAck ack, bool batched);
  // Ends the stream with `status` after the queued messages are written. Idempotent:
  // the first status wins.
  void Close(const grpc::Status& status);
  // Sends a Refusal (`reason`, `retryable`, `identity_in_use`), then ends the stream
  // with `code` and the same reason.
  void Refuse(grpc::StatusCode code, const std::string& reason, bool retryable, bool identity_in_use = false);
  // Starts reading the next inbound message.
  void ReadNext();
  bool closing() const;

  const std::string& session_id() const { return session_id_; }
  const std::string& peer() const { return peer_; }

  // --- agent state, set by the agent service (thread-safe) ---
  struct AgentState {
    std::string agent_id;  // "" until welcomed
    std::string name;
    std::string instance_id;  // the agent process's (Hello.instance_id)
    // Job assigned to / running on the agent, "" = idle. Cleared only when the agent
    // reports the job finished (also after a cancellation), so a device never gets a
    // second job while it may still run one.
    std::string running_job;
    std::string cancel_sent;   // running_job whose cancellation was already sent
    std::string current_case;  // of running_job, as its last JobProgress said (not stored)
    // Steady time (Clock::SteadyNow) of the agent's last message: liveness never reads
    // the wall clock, so setting it back or forth drops no agent.
    absl::Time last_heard = absl::InfinitePast();
    uint64_t rss_bytes = 0;
    double cpu_seconds = 0;
    uint32_t pending_acks = 0;
    bool read_paused = false;  // waiting for acks to drain before reading on
    // Not read on until a store call for its last message (a job end, accepted or
    // progress) returns: its heartbeats wait in TCP meanwhile, which is not silence.
    bool awaiting_store = false;
    bool holds_stream_slot = false;  // took a StreamSlots slot at its hello (given back at the end)
    bool stream_done = false;        // the stream ended (set before on_done's work)
    bool batched_acks = false;       // the hello announced CAPABILITY_RESULT_ACKS
  };
  AgentState state() const;
  void UpdateState(const std::function<void(AgentState&)>& update);

 private:
  friend class AgentStream;
  void Attach(AgentStream* reactor, Handlers handlers);
  void OnReadDone(bool ok);
  void OnWriteDone(bool ok);
  void OnDone();
  // Issues whatever gRPC operations are due; see the rules above.
  void Pump();

  const std::string session_id_;
  const std::string peer_;
  mutable absl::Mutex mu_;
  AgentStream* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;  // valid until Finish is issued
  Handlers handlers_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer in_;
  grpc::ByteBuffer current_write_;
  std::deque<v1::CoordinatorMessage> outbound_ ABSL_GUARDED_BY(mu_);
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool want_read_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_issued_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status finish_status_ ABSL_GUARDED_BY(mu_);
  bool pumping_ ABSL_GUARDED_BY(mu_) = false;
  bool repump_ ABSL_GUARDED_BY(mu_) = false;
  AgentState agent_ ABSL_GUARDED_BY(mu_);
};

class AgentStream : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Starts reading at once. Deletes itself in OnDone.
  AgentStream(std::shared_ptr<AgentSession> session, AgentSession::Handlers handlers);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  std::shared_ptr<AgentSession> session_;
};

}  // namespace fleetmark::service
