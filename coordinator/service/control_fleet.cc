#include "coordinator/service/control_service.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/service/revocation.h"
#include "coordinator/service/secrets.h"
#include "coordinator/service/selector.h"
#include "engine/common/log.h"
#include "engine/common/message_text.h"
#include "engine/common/status_macros.h"

namespace fleetmark::service {

grpc::ServerUnaryReactor* ControlServiceImpl::ListAgents(grpc::CallbackServerContext* context,
                                                         const v1::ListAgentsRequest* request,
                                                         v1::ListAgentsResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(Selector selector, Selector::Parse(request->selector()));
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::AgentInfo> agents, store_.ListAgents(request->include_removed()));
    for (v1::AgentInfo& agent : agents) {
      // A job that ended (cancelled) is still the agent's until it reports it stopped:
      // an agent connected here is not shown idle while it may still run one.
      if (agent.running_job_id().empty()) {
        if (std::shared_ptr<AgentSession> session = registry_.Find(agent.agent_id()); session != nullptr) {
          agent.set_running_job_id(session->state().running_job);
        }
      }
      std::map<std::string, std::string> labels(agent.labels().begin(), agent.labels().end());
      // Listing shows every agent's health; it filters by health only when asked.
      if (selector.has_health_term() && !selector.AdmitsHealth(agent.health() == store::kHealthQuarantined)) continue;
      if (selector.Matches(agent.name(), agent.host(), labels)) *response->add_agents() = std::move(agent);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::RemoveAgent(grpc::CallbackServerContext* context,
                                                          const v1::RemoveAgentRequest* request,
                                                          v1::RemoveAgentResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(store::RemovedAgent removed, store_.RemoveAgent(request->name()));
    response->set_agent_id(removed.agent_id);
    for (const std::string& job : removed.failed_jobs) response->add_failed_jobs(job);
    // Its stream here ends now; on another coordinator at its next liveness flush. A
    // database error here leaves it to the sweeper: the removal itself is committed.
    absl::StatusOr<std::vector<std::string>> ended = EndRevokedAgentStreams(store_, registry_);
    if (ended.ok() && !ended->empty()) {
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo, absl::StrCat("agent ", request->name(), " removed: disconnected"));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ReleaseAgent(grpc::CallbackServerContext* context,
                                                           const v1::ReleaseAgentRequest* request,
                                                           v1::ReleaseAgentResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(store::ReleasedAgent released, store_.ReleaseAgent(request->name()));
    response->set_agent_id(released.agent_id);
    response->set_reason(released.reason);
    response->set_quarantined_unix_ns(absl::ToUnixNanos(released.quarantined_at));
    ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                     absl::StrCat("agent ", request->name(), " released from quarantine (", released.reason, ")"));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::CreateToken(grpc::CallbackServerContext* context,
                                                          const v1::CreateTokenRequest* request,
                                                          v1::CreateTokenResponse* response) {
  return Async(context, [this, request, response]() -> absl::Status {
    // The description is listed by `tokens list` and the web view: one line of at most
    // 256 bytes of printable UTF-8 (message_text.h's default rule).
    FLEETMARK_RETURN_IF_ERROR(CheckMessageText(*request, "token", MessageTextRules{}));
    const std::string token_id = absl::StrCat("tok-", RandomToken().substr(0, 12));
    const std::string token = RandomToken();
    FLEETMARK_RETURN_IF_ERROR(store_.CreateEnrollmentToken(token_id, Sha256Hex(token), request->description()));
    response->set_token_id(token_id);
    response->set_token(token);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::RevokeToken(grpc::CallbackServerContext* context,
                                                          const v1::RevokeTokenRequest* request, v1::Empty*) {
  return Async(context, [this, request]() -> absl::Status {
    FLEETMARK_RETURN_IF_ERROR(store_.RevokeEnrollmentToken(request->token_id()));
    // This coordinator's agents enrolled with it are disconnected now; other
    // coordinators' at their next liveness flush. A database error here leaves it to
    // the sweeper: the revocation itself is committed.
    absl::StatusOr<std::vector<std::string>> ended = EndRevokedAgentStreams(store_, registry_);
    if (ended.ok() && !ended->empty()) {
      ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                       absl::StrCat("enrollment token ", request->token_id(), " revoked: disconnected ",
                                    absl::StrJoin(*ended, ", ")));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ControlServiceImpl::ListTokens(grpc::CallbackServerContext* context,
                                                         const v1::ListTokensRequest*,
                                                         v1::ListTokensResponse* response) {
  return Async(context, [this, response]() -> absl::Status {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::TokenInfo> tokens, store_.ListEnrollmentTokens());
    for (v1::TokenInfo& token : tokens) *response->add_tokens() = std::move(token);
    return absl::OkStatus();
  });
}

}  // namespace fleetmark::service
