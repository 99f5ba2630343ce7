#include "engine/scenarios/load_scenario.h"

#include <sys/resource.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/measure/process_stats.h"
#include "engine/measure/thread_sampler.h"
#include "engine/child/child.h"
#include "engine/scenarios/case_status.h"
#include "engine/scenarios/child_case.h"
#include "engine/scenarios/load_client.h"
#include "engine/scenarios/load_server.h"
#include "engine/scenarios/params.h"
#include "engine/scenarios/resource_limits.h"

namespace fleetmark::engine {
namespace {

// Descriptors per user (client socket + server socket) plus a margin for the process.
uint64_t DescriptorsNeeded(const LoadConfig& c) { return 2 * uint64_t{c.users} + 128; }

// OK if V users fit the descriptor hard limit and the ephemeral port range.
absl::Status CheckLoadFits(const LoadConfig& c) {
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_max != RLIM_INFINITY &&
      DescriptorsNeeded(c) > nofile.rlim_max) {
    return absl::ResourceExhaustedError(
        absl::StrCat("load.users = ", c.users, " needs about ", DescriptorsNeeded(c),
                     " descriptors (client + server socket per user) but RLIMIT_NOFILE's hard limit is ",
                     nofile.rlim_max, " (raise it with ulimit -Hn / LimitNOFILE)"));
  }
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  uint32_t low = 0, high = 0;
  if (range >> low >> high && high >= low && c.users > high - low + 1) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "load.users = ", c.users, " needs one loopback port each but ip_local_port_range has ", high - low + 1));
  }
  return CheckThreadsFit(c.server_threads + c.client_threads + 2);
}

}  // namespace

absl::Status RunLoadInProcess(const v1::CaseSpec& spec, v1::CaseResult* result) {
  FLEETMARK_ASSIGN_OR_RETURN(LoadConfig config, ResolveLoadConfig(spec));
  absl::StatusOr<std::unique_ptr<LoadServer>> server =
      MakeLoadServer(spec.strategy().name(), spec.io_mode() == "suspending", config);
  if (!server.ok()) {
    result->set_status(CaseStatusForError(server.status()));
    result->set_message(std::string(server.status().message()));
    return absl::OkStatus();
  }
  if (absl::StatusOr<uint64_t> raised = RaiseDescriptorLimit(); !raised.ok()) {
    result->set_status(v1::CASE_STATUS_FAILED);
    result->set_message(std::string(raised.status().message()));
    return absl::OkStatus();
  }
  if (absl::Status fits = CheckLoadFits(config); !fits.ok()) {
    result->set_status(CaseStatusForError(fits));
    result->set_message(std::string(fits.message()));
    return absl::OkStatus();
  }
  const bool peak_reset = ResetPeakRss().ok();
  PeakThreadSampler sampler(absl::Milliseconds(10));
  const bool sampling = sampler.Start().ok();
  absl::Status started = (*server)->Start();
  absl::StatusOr<LoadReport> report = absl::UnknownError("not run");
  if (started.ok()) report = LoadClient(config, (*server)->port()).Run();
  (*server)->Stop();
  sampler.Stop();
  if (!started.ok() || !report.ok()) {
    const absl::Status& s = started.ok() ? report.status() : started;
    result->set_status(CaseStatusForError(s));
    result->set_message(absl::StrCat(started.ok() ? "load generator: " : "server: ", s.message()));
    return absl::OkStatus();
  }

  v1::LoadResult* load = result->mutable_load();
  const LatencyHistogram& h = report->hold_latency;
  auto ms = [](absl::Duration d) { return absl::ToDoubleMilliseconds(d); };
  load->set_throughput_rps(static_cast<double>(report->hold_ok) / absl::ToDoubleSeconds(report->hold));
  load->set_latency_mean_ms(ms(h.Mean()));
  load->set_latency_p50_ms(ms(h.Percentile(50)));
  load->set_latency_p95_ms(ms(h.Percentile(95)));
  load->set_latency_p99_ms(ms(h.Percentile(99)));
  load->set_latency_p999_ms(ms(h.Percentile(99.9)));
  load->set_latency_max_ms(ms(h.Max()));
  load->set_requests(report->responses);
  load->set_server_requests((*server)->responses());
  load->set_errors_refused(report->refused);
  load->set_errors_timeout(report->timeouts);
  load->set_errors_5xx(report->server_errors);
  load->set_errors_other(report->other_errors);
  load->set_users(config.users);
  load->set_histogram_relative_error(LatencyHistogram::kRelativeError);
  load->set_generator_cpu_percent(100.0 * absl::ToDoubleSeconds(report->cpu) / absl::ToDoubleSeconds(report->wall));
  load->set_generator_max_lag_ms(ms(report->max_lag));
  load->set_server_threads(static_cast<uint32_t>((*server)->threads()));
  load->set_measured_seconds(absl::ToDoubleSeconds(report->hold));
  load->set_response_bytes(report->response_bytes);
  if (absl::StatusOr<ProcessStatus> status = ReadProcessStatus(); status.ok()) {
    load->set_peak_rss_bytes(status->peak_rss_bytes);
  }
  if (sampling) {
    const int64_t server_side = sampler.peak_threads() - config.client_threads;
    load->set_peak_threads(static_cast<uint32_t>(std::max<int64_t>(server_side, 0)));
    result->mutable_counters()->set_peak_threads(static_cast<uint32_t>(sampler.peak_threads()));
  }
  result->set_threads_used(static_cast<uint32_t>((*server)->threads()));
  result->set_status(v1::CASE_STATUS_OK);
  std::string message = (*server)->Describe();
  if (!report->raised_priority) {
    absl::StrAppend(&message, "; generator threads could not get nice -10");
  }
  if (!report->first_other_error.empty()) {
    absl::StrAppend(&message, "; first other error: ", report->first_other_error);
  }
  if (!peak_reset) absl::StrAppend(&message, "; peak RSS is the child's peak since its start");
  result->set_message(message);
  return absl::OkStatus();
}

absl::Status RunLoadCase(const v1::CaseSpec& spec, const ScenarioContext& ctx, v1::CaseResult* result) {
  FLEETMARK_ASSIGN_OR_RETURN(LoadConfig config, ResolveLoadConfig(spec));
  if (absl::Status fits = CheckLoadFits(config); !fits.ok()) {
    result->set_status(CaseStatusForError(fits));
    result->set_message(absl::StrCat("skipped: ", fits.message()));
    return absl::OkStatus();
  }
  const absl::Duration timeout = config.ramp + config.hold + config.request_timeout + config.think + absl::Seconds(60);
  RunCaseInChild(kLoadChildKind, spec,
                 {.executable = ctx.child_executable, .timeout = timeout, .cancelled = ctx.cancelled}, result);
  return absl::OkStatus();
}

absl::StatusOr<std::string> LoadChild(std::string_view request) {
  return ServeCaseInChild(request, "load", RunLoadInProcess);
}

}  // namespace fleetmark::engine
