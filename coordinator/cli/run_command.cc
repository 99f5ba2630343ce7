// `fleetmark run PLAN`: measure a plan locally and print or write its results.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "coordinator/cli/local_commands.h"
#include "coordinator/cli/plan_loader.h"
#include "coordinator/cli/progress_bar.h"
#include "coordinator/cli/run_flags.h"
#include "engine/plan/plan.h"
#include "engine/report/report.h"
#include "engine/runner/runner.h"
#include "engine/topology/host.h"

namespace fleetmark::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// A random (version 4) UUID, RFC 4122 §4.4.
std::string RandomUuid(std::mt19937_64& rng) {
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~uint64_t{0xF000}) | 0x4000;                        // version 4
  lo = (lo & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60);    // variant 10
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32, (hi >> 16) & 0xFFFF,
                         hi & 0xFFFF, lo >> 48, lo & 0xFFFFFFFFFFFFull);
}

int Fail(int code, const std::string& message) {
  std::cerr << "fleetmark run: " << message << "\n";
  return code;
}

int RunCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    return Fail(kExitUsage, absl::StrFormat("expected one PLAN argument, got %d (usage: "
                                            "fleetmark run PLAN [--format ...])",
                                            args.size()));
  }
  absl::StatusOr<RunCommandOptions> options = RunCommandOptionsFromFlags();
  if (!options.ok()) return Fail(kExitUsage, std::string(options.status().message()));
  absl::StatusOr<v1::Plan> plan = LoadValidPlan(args[0]);
  if (!plan.ok()) return Fail(kExitUsage, std::string(plan.status().message()));

  // Open the output first: an unwritable --out is bad input, found before any case runs.
  std::ofstream out_file;
  if (!options->out.empty()) {
    out_file.open(options->out, std::ios::binary | std::ios::trunc);
    if (!out_file) return Fail(kExitUsage, "--out: cannot write " + options->out);
  }

  engine::RunOptions run_options;
  run_options.quick = options->quick;
  run_options.filter = options->filter;
  std::optional<ProgressBar> bar;
  if (::isatty(STDERR_FILENO)) {
    bar.emplace(stderr);
    run_options.on_progress = [&bar](const engine::RunProgress& p) { bar->Update(p); };
  }
  std::mt19937_64 rng(std::random_device{}());
  v1::RunReport report;
  report.set_plan_name(plan->name());
  engine::ResultCallback on_result = [&](const v1::CaseResult& result) {
    v1::CaseResult* stored = report.add_results();
    *stored = result;
    stored->set_result_id(RandomUuid(rng));
  };

  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  struct sigaction previous = {};
  ::sigaction(SIGINT, &action, &previous);
  const absl::Time started = absl::Now();
  absl::StatusOr<engine::RunSummary> summary =
      engine::RunPlan(*plan, run_options, on_result, &g_interrupted);
  ::sigaction(SIGINT, &previous, nullptr);
  if (bar) bar->Finish();
  if (!summary.ok()) {
    const bool bad_input = summary.status().code() == absl::StatusCode::kInvalidArgument;
    return Fail(bad_input ? kExitUsage : kExitFailure, std::string(summary.status().message()));
  }

  // Results arrive in the shuffled order cases finish; report them in plan order.
  std::unordered_map<std::string, size_t> plan_order;
  for (const v1::CaseSpec& spec : engine::ExpandCases(*plan, options->quick)) {
    plan_order.emplace(spec.case_id(), plan_order.size());
  }
  std::stable_sort(report.mutable_results()->begin(), report.mutable_results()->end(),
                   [&](const v1::CaseResult& a, const v1::CaseResult& b) {
                     return plan_order[a.spec().case_id()] < plan_order[b.spec().case_id()];
                   });

  absl::StatusOr<v1::HostInfo> host = engine::DetectHost();
  if (host.ok()) *report.mutable_host() = *host;
  report::ReportOptions report_options;
  report_options.now = absl::Now();
  absl::StatusOr<std::string> text = report::FormatReport(report, options->format, report_options);
  if (!text.ok()) return Fail(kExitFailure, std::string(text.status().message()));
  if (out_file.is_open()) {
    out_file << *text;
    out_file.close();
    if (!out_file) return Fail(kExitFailure, "--out: writing " + options->out + " failed");
  } else {
    std::cout << *text << std::flush;
  }
  std::cerr << absl::StrFormat(
      "fleetmark run: %d cases in %s: %d ok, %d unsupported, %d failed%s\n", summary->cases,
      absl::FormatDuration(absl::Trunc(absl::Now() - started, absl::Seconds(1))), summary->ok,
      summary->unsupported, summary->failed,
      summary->cancelled > 0 ? absl::StrFormat(", %d cancelled (interrupted)", summary->cancelled)
                             : "");
  return summary->cancelled > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void RegisterRunCommand(CommandRegistry& registry) {
  registry.Add({.name = "run",
                .summary = "run a plan on this machine (no servers) and print its results",
                .usage = "fleetmark run PLAN [--format table|json|csv|gbench-json] "
                         "[--out FILE] [--filter REGEX] [--quick]",
                .run = RunCommand});
}

}  // namespace fleetmark::cli
