#include "coordinator/service/agent_stream.h"

#include "absl/strings/str_cat.h"
#include "coordinator/service/parse_errors.h"
#include "engine/common/text.h"

namespace fleetmark::service {
namespace {

constexpr char kConnectMethod[] = "/fleetmark.v1.AgentService/Connect";

}  // namespace

AgentSession::AgentSession(std::string session_id, std::string peer)
    : session_id_(std::move(session_id)), peer_(std::move(peer)) {}

void AgentSession::Attach(AgentStream* reactor, Handlers handlers) {
  absl::MutexLock lock(&mu_);
  reactor_ = reactor;
  handlers_ = std::move(handlers);
  want_read_ = true;
}

void AgentSession::Send(v1::CoordinatorMessage message) {
  {
    absl::MutexLock lock(&mu_);
    if (finish_requested_) return;
    outbound_.push_back(std::move(message));
  }
  Pump();
}

void AgentSession::SendResultAck(v1::ResultAck ack, bool batched) {
  {
    absl::MutexLock lock(&mu_);
    if (finish_requested_) return;
    // Only queued messages are joined: the one being written was already serialised.
    if (batched && !outbound_.empty() && outbound_.back().has_acks() &&
        outbound_.back().acks().acks_size() < kMaxAcksPerMessage) {
      *outbound_.back().mutable_acks()->add_acks() = std::move(ack);
      return;  // a write is in flight or queued ahead: its completion pumps this one
    }
    v1::CoordinatorMessage message;
    if (batched) {
      *message.mutable_acks()->add_acks() = std::move(ack);
    } else {
      *message.mutable_ack() = std::move(ack);
    }
    outbound_.push_back(std::move(message));
  }
  Pump();
}

void AgentSession::Close(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (finish_requested_) return;
    finish_requested_ = true;
    // What the agent sent and the reason echoes is cut (engine/common/text.h).
    finish_status_ = grpc::Status(status.error_code(), CutLongEchoes(status.error_message()), status.error_details());
  }
  Pump();
}

void AgentSession::Refuse(grpc::StatusCode code, const std::string& reason, bool retryable, bool identity_in_use) {
  v1::CoordinatorMessage message;
  message.mutable_refusal()->set_reason(CutLongEchoes(reason));
  message.mutable_refusal()->set_retryable(retryable);
  message.mutable_refusal()->set_identity_in_use(identity_in_use);
  Send(std::move(message));
  Close(grpc::Status(code, reason));
}

void AgentSession::ReadNext() {
  {
    absl::MutexLock lock(&mu_);
    want_read_ = true;
  }
  Pump();
}

bool AgentSession::closing() const {
  absl::MutexLock lock(&mu_);
  return finish_requested_;
}

AgentSession::AgentState AgentSession::state() const {
  absl::MutexLock lock(&mu_);
  return agent_;
}

void AgentSession::UpdateState(const std::function<void(AgentState&)>& update) {
  absl::MutexLock lock(&mu_);
  update(agent_);
}

void AgentSession::OnReadDone(bool ok) {
  v1::AgentMessage message;
  std::function<void(std::shared_ptr<AgentSession>, v1::AgentMessage)> handler;
  bool unparseable = false;
  {
    absl::MutexLock lock(&mu_);
    reading_ = false;
    if (!ok) {
      // The agent half-closed or the stream broke: end our side too.
      if (!finish_requested_) {
        finish_requested_ = true;
        finish_status_ = grpc::Status::OK;
      }
    } else if (!finish_requested_) {
      unparseable = !grpc::SerializationTraits<v1::AgentMessage>::Deserialize(&in_, &message).ok();
      if (!unparseable) handler = handlers_.on_message;
    }
    in_.Clear();
  }
  if (unparseable) {
    const grpc::Status status = ParseErrorStatus(kConnectMethod);
    Refuse(grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("malformed message: ", status.error_message()), false);
    return;
  }
  if (handler) handler(shared_from_this(), std::move(message));
  Pump();
}

void AgentSession::OnWriteDone(bool ok) {
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      write_failed_ = true;
      if (!finish_requested_) {
        finish_requested_ = true;
        finish_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "write to agent failed");
      }
    }
  }
  Pump();
}

void AgentSession::OnDone() {
  std::function<void(std::shared_ptr<AgentSession>)> on_done;
  {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
    finish_requested_ = finish_issued_ = true;
    outbound_.clear();
    on_done = std::move(handlers_.on_done);
    handlers_ = {};
  }
  if (on_done) on_done(shared_from_this());
}

void AgentSession::Pump() {
  mu_.Lock();
  if (pumping_) {
    repump_ = true;
    mu_.Unlock();
    return;
  }
  pumping_ = true;
  for (;;) {
    repump_ = false;
    if (finish_issued_ || reactor_ == nullptr) break;
    AgentStream* reactor = reactor_;
    if (!writing_ && !write_failed_ && !outbound_.empty()) {
      v1::CoordinatorMessage next = std::move(outbound_.front());
      outbound_.pop_front();
      writing_ = true;
      mu_.Unlock();
      // Serialised here, off the lock (only the pumping thread touches current_write_).
      bool own_buffer = false;
      current_write_.Clear();  // the previous write is done (writing_ was false)
      grpc::Status serialized =
          grpc::SerializationTraits<v1::CoordinatorMessage>::Serialize(next, &current_write_, &own_buffer);
      if (serialized.ok()) {
        reactor->StartWrite(&current_write_);
        mu_.Lock();
      } else {  // cannot happen for a message we built; end the stream rather than hang
        mu_.Lock();
        writing_ = false;
        write_failed_ = true;
        if (!finish_requested_) {
          finish_requested_ = true;
          finish_status_ = grpc::Status(grpc::StatusCode::INTERNAL, "cannot serialise a message to the agent");
        }
      }
      continue;
    }
    if (want_read_ && !reading_ && !finish_requested_) {
      want_read_ = false;
      reading_ = true;
      mu_.Unlock();
      reactor->StartRead(&in_);
      mu_.Lock();
      continue;
    }
    if (finish_requested_ && !writing_ && (outbound_.empty() || write_failed_)) {
      finish_issued_ = true;
      const grpc::Status status = finish_status_;
      mu_.Unlock();
      reactor->Finish(status);  // the reactor may be gone after this returns
      mu_.Lock();
      break;
    }
    if (!repump_) break;
  }
  pumping_ = false;
  mu_.Unlock();
}

AgentStream::AgentStream(std::shared_ptr<AgentSession> session, AgentSession::Handlers handlers)
    : session_(std::move(session)) {
  session_->Attach(this, std::move(handlers));
  session_->Pump();
}

void AgentStream::OnReadDone(bool ok) { session_->OnReadDone(ok); }
void AgentStream::OnWriteDone(bool ok) { session_->OnWriteDone(ok); }
void AgentStream::OnCancel() { session_->Close(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled")); }

void AgentStream::OnDone() {
  session_->OnDone();
  delete this;
}

}  // namespace fleetmark::service
