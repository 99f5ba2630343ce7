#include "engine/scenarios/case_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace fleetmark::engine {

v1::CaseStatus CaseStatusForError(const absl::Status& error) {
  if (absl::IsResourceExhausted(error)) return v1::CASE_STATUS_RESOURCE_EXHAUSTED;
  if (absl::IsDeadlineExceeded(error)) return v1::CASE_STATUS_TIMEOUT;
  if (absl::IsCancelled(error)) return v1::CASE_STATUS_CANCELLED;
  if (absl::IsUnimplemented(error)) return v1::CASE_STATUS_UNSUPPORTED;
  return v1::CASE_STATUS_FAILED;
}

std::string ChildErrorMessage(const absl::Status& error) {
  if (absl::IsUnimplemented(error)) return std::string(error.message());
  return absl::StrCat("child process: ", error.message());
}

bool MarkUnmeasured(v1::CaseResult& result) {
  if (result.status() != v1::CASE_STATUS_OK && result.status() != v1::CASE_STATUS_UNSPECIFIED) {
    return false;
  }
  std::string why;
  bool timeouts = false;
  if (result.has_load()) {
    v1::LoadResult& l = *result.mutable_load();
    if (l.requests() > 0 && l.throughput_rps() > 0) return false;
    const uint64_t other = l.errors_refused() + l.errors_5xx() + l.errors_other();
    timeouts = l.errors_timeout() > 0 && other == 0;
    why = absl::StrCat("no measurement: 0 responses completed in the measured window (", l.errors_timeout(),
                       " timed out, ", l.errors_refused(), " refused, ", l.errors_5xx(), " 5xx, ", l.errors_other(),
                       " other errors)");
    for (auto setter :
         {&v1::LoadResult::set_throughput_rps, &v1::LoadResult::set_latency_mean_ms,
          &v1::LoadResult::set_latency_p50_ms, &v1::LoadResult::set_latency_p95_ms, &v1::LoadResult::set_latency_p99_ms,
          &v1::LoadResult::set_latency_p999_ms, &v1::LoadResult::set_latency_max_ms}) {
      (l.*setter)(0);
    }
  } else if (result.has_fanout()) {
    v1::FanoutResult& f = *result.mutable_fanout();
    if (f.successes() > 0) return false;
    timeouts = f.timeouts() > 0 && f.failures() == 0;
    why = absl::StrCat("no measurement: 0 requests succeeded (", f.timeouts(), " timed out, ", f.failures(),
                       " failed; ", f.call_timeouts(), " of ", f.calls(), " calls timed out)");
    for (auto setter : {&v1::FanoutResult::set_total_ms, &v1::FanoutResult::set_latency_mean_ms,
                        &v1::FanoutResult::set_latency_p50_ms, &v1::FanoutResult::set_latency_p95_ms,
                        &v1::FanoutResult::set_latency_p99_ms, &v1::FanoutResult::set_latency_max_ms}) {
      (f.*setter)(0);
    }
  } else {
    return false;
  }
  result.clear_stats();
  result.clear_samples_ns();
  result.set_status(timeouts ? v1::CASE_STATUS_TIMEOUT : v1::CASE_STATUS_FAILED);
  result.set_message(result.message().empty() ? why : absl::StrCat(why, "; ", result.message()));
  return true;
}

}  // namespace fleetmark::engine
