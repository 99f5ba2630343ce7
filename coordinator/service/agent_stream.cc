#include "coordinator/service/agent_stream.h"

namespace fleetmark::service {

AgentSession::AgentSession(std::string session_id, std::string peer)
    : session_id_(std::move(session_id)), peer_(std::move(peer)) {}

void AgentSession::Attach(AgentStream* reactor, Handlers handlers) {
  std::lock_guard<std::mutex> lock(mu_);
  reactor_ = reactor;
  handlers_ = std::move(handlers);
  want_read_ = true;
}

void AgentSession::Send(v1::CoordinatorMessage message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finish_requested_) return;
    outbound_.push_back(std::move(message));
  }
  Pump();
}

void AgentSession::Close(const grpc::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finish_requested_) return;
    finish_requested_ = true;
    finish_status_ = status;
  }
  Pump();
}

void AgentSession::Refuse(grpc::StatusCode code, const std::string& reason, bool retryable) {
  v1::CoordinatorMessage message;
  message.mutable_refusal()->set_reason(reason);
  message.mutable_refusal()->set_retryable(retryable);
  Send(std::move(message));
  Close(grpc::Status(code, reason));
}

void AgentSession::ReadNext() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    want_read_ = true;
  }
  Pump();
}

bool AgentSession::closing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finish_requested_;
}

AgentSession::AgentState AgentSession::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return agent_;
}

void AgentSession::UpdateState(const std::function<void(AgentState&)>& update) {
  std::lock_guard<std::mutex> lock(mu_);
  update(agent_);
}

void AgentSession::OnReadDone(bool ok) {
  v1::AgentMessage message;
  std::function<void(std::shared_ptr<AgentSession>, v1::AgentMessage)> handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reading_ = false;
    if (!ok) {
      // The agent half-closed or the stream broke: end our side too.
      if (!finish_requested_) {
        finish_requested_ = true;
        finish_status_ = grpc::Status::OK;
      }
    } else if (!finish_requested_) {
      message = std::move(in_);
      in_.Clear();
      handler = handlers_.on_message;
    }
  }
  if (handler) handler(shared_from_this(), std::move(message));
  Pump();
}

void AgentSession::OnWriteDone(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
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
    std::lock_guard<std::mutex> lock(mu_);
    reactor_ = nullptr;
    finish_requested_ = finish_issued_ = true;
    outbound_.clear();
    on_done = std::move(handlers_.on_done);
    handlers_ = {};
  }
  if (on_done) on_done(shared_from_this());
}

void AgentSession::Pump() {
  std::unique_lock<std::mutex> lock(mu_);
  if (pumping_) {
    repump_ = true;
    return;
  }
  pumping_ = true;
  for (;;) {
    repump_ = false;
    if (finish_issued_ || reactor_ == nullptr) break;
    AgentStream* reactor = reactor_;
    if (!writing_ && !write_failed_ && !outbound_.empty()) {
      current_write_ = std::move(outbound_.front());
      outbound_.pop_front();
      writing_ = true;
      lock.unlock();
      reactor->StartWrite(&current_write_);
      lock.lock();
      continue;
    }
    if (want_read_ && !reading_ && !finish_requested_) {
      want_read_ = false;
      reading_ = true;
      lock.unlock();
      reactor->StartRead(&in_);
      lock.lock();
      continue;
    }
    if (finish_requested_ && !writing_ && (outbound_.empty() || write_failed_)) {
      finish_issued_ = true;
      const grpc::Status status = finish_status_;
      lock.unlock();
      reactor->Finish(status);  // the reactor may be gone after this returns
      lock.lock();
      break;
    }
    if (!repump_) break;
  }
  pumping_ = false;
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
