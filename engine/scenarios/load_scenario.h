// The load scenario (S3): a closed-loop load generator (load_client.h) against an
// in-process HTTP/1.1 server built on a strategy (load_server.h), both in one child
// process on loopback.
//
// Result (LoadResult): throughput = 2xx responses completed in the hold window / hold
// seconds; latency mean/p50/p95/p99/p99.9/max of those responses from a log-linear
// histogram whose percentiles are within histogram_relative_error (1/256 = 0.39%) of
// the true sample; errors by kind; `requests` (client: responses read completely over
// the whole run, any status) and `server_requests` (server: responses written
// completely) — equal unless requests timed out; peak RSS (VmHWM of the child, which
// also holds the generator) and peak threads (minus the generator's threads);
// generator_cpu_percent and generator_max_lag_ms as evidence that the generator kept
// its schedule (lag near 0 and CPU well below 100% of one core per generator thread).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/scenarios/scenario.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Fills `result` for `spec` (scenario "load"), running the case in a child process.
// InvalidArgument only for a bad spec; failures are the result's status.
absl::Status RunLoadCase(const v1::CaseSpec& spec, const ScenarioContext& ctx, v1::CaseResult* result);

// Child handler for kLoadChildKind: CaseSpec in, CaseResult out (serialized).
absl::StatusOr<std::string> LoadChild(std::string_view request);

// Runs the case in this process (raises RLIMIT_NOFILE's soft limit to the hard one).
// Used by LoadChild and by tests.
absl::Status RunLoadInProcess(const v1::CaseSpec& spec, v1::CaseResult* result);

}  // namespace fleetmark::engine
