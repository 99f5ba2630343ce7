// The size limits of fleetmark's gRPC messages: one constant per end (coordinator
// server, agent channel, CLI channel), each applied to both directions, so no end
// falls back to gRPC's 4 MiB receive default. A message over a limit fails the call
// with RESOURCE_EXHAUSTED ("Received message larger than max (N vs. LIMIT)"); what
// fleetmark can check in advance it refuses with a message naming the limit instead:
//   - a plan whose job assignment would not fit the agent stream is refused at submit
//     and at schedule creation (service::CheckPlanDeliverable);
//   - the unary ExportResults refuses a run whose answer would not fit; StreamResults
//     sends any run in pages of about kResultPageBytes (one result per page at least).
// The largest single message is a CaseResult with kMaxRepetitionsCap samples (about
// 10 MB at 10 bytes a sample); every limit here holds several of it.
//
// Header-only constants; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace fleetmark {

// fleetmark-coordinator's gRPC server (AgentService and ControlService): the largest
// message it receives (a SubmitRun with its plan, an agent's result) and sends (a job
// assignment, an ExportResults answer, a page of StreamResults), bytes.
inline constexpr int kCoordinatorMaxMessageBytes = 64 << 20;

// fleetmark-agent's channel: the largest message it receives (a job assignment, which
// carries the whole plan) and sends (a result), bytes.
inline constexpr int kAgentMaxMessageBytes = 64 << 20;

// The fleetmark CLI's channel: the largest message it receives (a page of results, a
// run, a list of agents or schedules) and sends (a plan), bytes.
inline constexpr int kCliMaxMessageBytes = 64 << 20;

// StreamResults puts results into one page until the next would take it past this many
// bytes; a single larger result travels alone.
inline constexpr size_t kResultPageBytes = size_t{1} << 20;

// "64 MiB" for a whole number of MiB, else "N bytes": how errors name a limit.
inline std::string FormatMessageLimit(uint64_t bytes) {
  if (bytes > 0 && bytes % (uint64_t{1} << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
  return absl::StrCat(bytes, " bytes");
}

}  // namespace fleetmark
