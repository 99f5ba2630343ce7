// The checks of an agent's hello that need no database, in the order the coordinator
// applies them before authenticating it (agent_service.h): protocol version, the text
// of every string (engine/common/message_text.h), the agent name, the label keys and
// the form of running_job_id and instance_id.
//
//   if (absl::Status s = CheckHello(hello); !s.ok()) refuse(ToGrpcCode(s), s.message());
//
// Pure function; thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark::service {

// Protocol versions this coordinator speaks (agent.proto, ProtocolVersion).
inline constexpr uint32_t kMinProtocolVersion = 1;
inline constexpr uint32_t kMaxProtocolVersion = 1;

// OK, or the refusal: FailedPrecondition for a protocol version outside
// [kMinProtocolVersion, kMaxProtocolVersion] (saying which side to upgrade);
// InvalidArgument naming the field and its allowed form for a string that breaks the
// text rules ("hello refused: hello.host.os: ..."), an agent name outside
// [A-Za-z0-9._-]{1,64}, a label key outside kAgentLabelKeyForm (empty, whitespace,
// markup: "hello refused: hello.labels key \"<b>\": 1 to 63 characters of
// [A-Za-z0-9._-]"), or a running_job_id or instance_id that is neither empty nor a UUID. Values quoted
// in a message are escaped (EscapeForTerminal) and cut. Never retryable.
absl::Status CheckHello(const v1::Hello& hello);

}  // namespace fleetmark::service
