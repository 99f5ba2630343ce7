// `fleetmark run PLAN`: measure a plan locally and print or write its results.
//
// Interrupts: SIGINT and SIGTERM are taken by a watcher thread (sigwait), which cancels
// the run: the runner starts nothing more and kills the child process of the slice in
// flight (its unfinished round is dropped), then delivers every finished case and, for
// a case with finished rounds, a partial result (engine/common/partial_result.h). If the runner has
// not returned within kInterruptGrace, or on a second signal, the watcher abandons it:
// it writes the results delivered so far (the other cases as CANCELLED). Either way the
// --out file is written (atomically, result_output.h), the last line says what was
// kept ("interrupted: kept 3 finished cases, 2 partial, 5 not run") and the exit code is
// 128 + the signal's number.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "coordinator/cli/case_outcomes.h"
#include "coordinator/cli/local_commands.h"
#include "coordinator/cli/plan_loader.h"
#include "coordinator/cli/progress_bar.h"
#include "coordinator/cli/table_fit.h"
#include "coordinator/cli/result_output.h"
#include "coordinator/cli/run_flags.h"
#include "engine/plan/plan.h"
#include "engine/report/report.h"
#include "engine/plan/case_filter.h"
#include "engine/plan/cost.h"
#include "engine/runner/runner.h"
#include "engine/strategies/openmp_implementation.h"
#include "engine/strategies/work_stealing_implementation.h"
#include "engine/topology/conditions_text.h"
#include "engine/topology/cpu_limits.h"
#include "engine/topology/fingerprint.h"
#include "engine/topology/host.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::cli {
namespace {

// How long an interrupted run may take to return before it is abandoned: its child
// process is killed at once, but the statistics of what it kept (a hierarchical
// bootstrap over up to max_repetitions samples per case) may take seconds.
constexpr absl::Duration kInterruptGrace = absl::Seconds(10);
// Sent by the main thread to stop the watcher when the run ends.
constexpr int kWatcherStop = SIGUSR2;

// A random (version 4) UUID, RFC 4122 §4.4.
std::string RandomUuid(std::mt19937_64& rng) {
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~uint64_t{0xF000}) | 0x4000;                      // version 4
  lo = (lo & ~(uint64_t{0xC} << 60)) | (uint64_t{0x8} << 60);  // variant 10
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                         lo & 0xFFFFFFFFFFFFull);
}

// "0.4s", "12.0s", "3m05s", "1h02m".
std::string HumanDuration(absl::Duration d) {
  const double s = absl::ToDoubleSeconds(d);
  if (s < 60) return absl::StrFormat("%.1fs", s);
  const int64_t whole = absl::ToInt64Seconds(d);
  if (whole < 3600) return absl::StrFormat("%dm%02ds", whole / 60, whole % 60);
  return absl::StrFormat("%dh%02dm", whole / 3600, (whole / 60) % 60);
}

// Everything the main thread and the interrupt watcher share.
class RunSession {
 public:
  RunSession(const v1::Plan& plan, const RunCommandOptions& options, std::vector<v1::CaseSpec> cases,
             ResultOutput output)
      : plan_(plan),
        options_(options),
        cases_(std::move(cases)),
        output_(std::move(output)),
        rng_(std::random_device{}()),
        started_(SteadyNow()) {
    report_.set_plan_name(plan.name());
    report_.set_quick(options.quick);
  }

  void OnResult(const v1::CaseResult& result) {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    v1::CaseResult* stored = report_.add_results();
    *stored = result;
    stored->set_result_id(RandomUuid(rng_));
  }

  // Stops accepting results; false if the watcher already took over (it will exit).
  bool Close() {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    closed_ = true;
    return true;
  }

  // Called once, after Close() returned true: adds CANCELLED results for the cases
  // that have none, writes the report in plan order and the summary line, and returns
  // the exit code (`signal` != 0: interrupted by it; `deferred` non-empty: the plan's
  // preflight gates kept failing, RunSummary::deferred, the unmeasured cases say so), or
  // Internal (exit 1) when the results could not be formatted or written.
  absl::StatusOr<int> Emit(int signal, const std::string& deferred = "") {
    std::set<std::string> reported;
    for (const v1::CaseResult& r : report_.results()) reported.insert(r.spec().case_id());
    for (const v1::CaseSpec& spec : cases_) {
      if (reported.count(spec.case_id()) > 0) continue;
      v1::CaseResult* r = report_.add_results();
      *r->mutable_spec() = spec;
      r->set_status(v1::CASE_STATUS_CANCELLED);
      r->set_message(deferred.empty() ? "interrupted before the case finished" : "not measured: " + deferred);
      r->set_engine_version(FLEETMARK_ENGINE_VERSION);
      r->set_quick(options_.quick);
      r->set_result_id(RandomUuid(rng_));
    }
    // Results arrive in the shuffled order cases finish; report them in plan order.
    std::unordered_map<std::string, size_t> plan_order;
    for (const v1::CaseSpec& spec : cases_) plan_order.emplace(spec.case_id(), plan_order.size());
    std::stable_sort(report_.mutable_results()->begin(), report_.mutable_results()->end(),
                     [&](const v1::CaseResult& a, const v1::CaseResult& b) {
                       return plan_order[a.spec().case_id()] < plan_order[b.spec().case_id()];
                     });
    absl::StatusOr<v1::HostInfo> host = engine::DetectHost();
    if (host.ok()) {
      host->add_notes(engine::WorkStealingImplementationNote());
      host->add_notes(engine::OpenMpImplementationNote());
      // Under user-mode emulation every number is the emulator's (as the coordinator
      // marks an emulated agent's results): CSV/JSON say so per result.
      // Each result with the device fingerprint it was measured under (its own limits
      // and governor), as the agent sends them.
      for (v1::CaseResult& r : *report_.mutable_results()) {
        r.set_emulated(host->emulated());
        *r.mutable_fingerprint() = engine::DeviceFingerprintOf(*host, r);
      }
      *report_.mutable_fingerprint() = engine::DeviceFingerprintOf(*host);
      *report_.mutable_host() = *std::move(host);
    }
    report::ReportOptions report_options;
    report_options.now = absl::Now();
    report_options.table = FittedTableOptions(options_.wide, !options_.out.empty());
    absl::StatusOr<std::string> text = report::FormatReport(report_, options_.format, report_options);
    if (!text.ok()) return absl::InternalError(text.status().message());
    if (absl::Status written = output_.WriteAll(*text); !written.ok()) return absl::InternalError(written.message());
    if (!options_.out.empty()) {
      std::cerr << WroteResultsLine(report_.results_size(), options_.out) << "\n";
      // The file holds the results; the terminal still gets the table (unless --quiet).
      if (!options_.quiet) {
        report_options.table = FittedTableOptions(options_.wide);
        absl::StatusOr<std::string> table = report::FormatReport(report_, report::ReportFormat::kTable, report_options);
        if (table.ok()) std::cout << *table << std::flush;
      }
    }
    const CaseOutcomes outcomes = CountOutcomes(report_.results());
    const int total = report_.results_size();
    std::cerr << absl::StrFormat("fleetmark run: %d case%s in %s: %s%s\n", total, total == 1 ? "" : "s",
                                 HumanDuration(SteadyNow() - started_), OutcomeCounts(outcomes),
                                 outcomes.cancelled > 0 ? absl::StrFormat(", %d cancelled (%s)", outcomes.cancelled,
                                                                          !deferred.empty()   ? "deferred"
                                                                          : signal == SIGTERM ? "terminated"
                                                                                              : "interrupted")
                                                        : "");
    if (signal != 0) {
      std::cerr << "fleetmark run: " << (signal == SIGTERM ? "terminated" : "interrupted") << ": "
                << KeptCounts(outcomes) << "\n";
    }
    // Gates that passed unchecked (no reading on this device): the table lists them; a
    // file or another format would not show them on the terminal.
    const bool table_on_stdout =
        options_.out.empty() ? options_.format == report::ReportFormat::kTable : !options_.quiet;
    if (!table_on_stdout) {
      std::vector<const v1::EnvSnapshot*> starts;
      for (const v1::CaseResult& r : report_.results()) {
        if (r.has_env_before()) starts.push_back(&r.env_before());
      }
      for (const std::string& line : engine::GatesNotCheckedLines(starts)) {
        std::cerr << "fleetmark run: gate not checked: " << line << "\n";  // std::cerr escapes
      }
    }
    std::cerr.flush();
    if (signal != 0) return kExitSignalBase + signal;
    if (!deferred.empty()) {
      std::cerr << "fleetmark run: " << deferred << "\n";
      return kExitDeferred;
    }
    return ExitCodeForOutcomes(outcomes);
  }

 private:
  const v1::Plan& plan_;
  const RunCommandOptions& options_;
  const std::vector<v1::CaseSpec> cases_;  // after the filter, plan order
  ResultOutput output_;
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // report_ and rng_: under mu_ until Close() returns true, then Emit's alone.
  v1::RunReport report_;
  std::mt19937_64 rng_;
  absl::Time started_;  // steady
};

absl::StatusOr<int> RunCommand(const std::vector<std::string>& args) {
  // Errors are bad input (InvalidArgument, exit 2) until the run starts, written
  // "fleetmark run: ..." by RunCli.
  if (args.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected one PLAN argument, got %d (usage: "
                        "fleetmark run PLAN [--format ...])",
                        args.size()));
  }
  absl::StatusOr<RunCommandOptions> options = RunCommandOptionsFromFlags();
  if (!options.ok()) return absl::InvalidArgumentError(options.status().message());
  absl::StatusOr<v1::Plan> plan = LoadValidPlan(args[0]);
  if (!plan.ok()) return absl::InvalidArgumentError(plan.status().message());
  // The cases RunPlan will run: the plan's, after --quick and --filter.
  absl::StatusOr<std::vector<v1::CaseSpec>> cases = engine::SelectCases(*plan, options->quick, options->filter);
  if (!cases.ok()) return absl::InvalidArgumentError(cases.status().message());

  // Open the output first: an unwritable --out is bad input, found before any case runs.
  absl::StatusOr<ResultOutput> output = ResultOutput::Open(options->out, args[0]);
  if (!output.ok()) return absl::InvalidArgumentError(output.status().message());
  // What the run costs on this machine (engine/plan/cost.h): the progress bar's ETA.
  const engine::PlanCost cost = engine::EstimatePlanCost(*plan, options->quick, *cases, engine::EffectiveCpuCount());
  RunSession session(*plan, *options, std::move(*cases), std::move(*output));

  // Signals go to the watcher only: block them here, before any thread starts (threads
  // inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, kWatcherStop);
  sigset_t previous_mask;
  pthread_sigmask(SIG_BLOCK, &signals, &previous_mask);

  std::atomic<bool> cancelled{false};
  std::atomic<int> interrupt_signal{0};
  std::atomic<bool> bar_drawn{false};
  std::thread watcher([&] {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0 || signal == kWatcherStop) return;
    interrupt_signal = signal;
    cancelled = true;
    if (bar_drawn) std::fputs("\r\033[K", stderr);
    // In the words of the signal that came: a SIGTERM came from a process, not a key.
    std::fputs(signal == SIGTERM ? "fleetmark run: terminated: the case in flight is killed, what finished is kept "
                                   "(another SIGTERM or SIGINT abandons it at once)\n"
                                 : "fleetmark run: stopping: the case in flight is killed, what finished is kept "
                                   "(Ctrl-C again to abandon at once)\n",
               stderr);
    const timespec grace = absl::ToTimespec(kInterruptGrace);
    const int next = sigtimedwait(&signals, nullptr, &grace);
    if (next == kWatcherStop) return;  // the run ended within the grace period
    // The repetition in progress did not end in time, or a second signal: abandon it.
    if (!session.Close()) return;
    if (bar_drawn) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    // The process ends here, not in RunCli: its error is written here, by the same writer.
    const absl::StatusOr<int> emitted = session.Emit(signal);
    const int code = emitted.ok() ? *emitted : ReportError("fleetmark run", emitted.status());
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
  });

  engine::RunOptions run_options;
  run_options.quick = options->quick;
  run_options.filter = options->filter;
  std::optional<ProgressBar> bar;
  if (::isatty(STDERR_FILENO)) {
    // The first ETA is the plan's price (expected and worst case), said once above the bar.
    std::cerr << "fleetmark run: " << engine::PlanCostText(cost) << "\n";
    bar.emplace(stderr, cost);
    run_options.on_progress = [&](const engine::RunProgress& p) {
      if (cancelled) return;
      bar->Update(p);
      bar_drawn = true;
    };
  }
  absl::StatusOr<engine::RunSummary> summary = engine::RunPlan(
      *plan, run_options, [&](const v1::CaseResult& r) { session.OnResult(r); }, &cancelled);
  const bool mine = session.Close();
  if (bar) bar->Finish();
  if (!mine) {
    // The watcher is writing the results and will exit the process.
    watcher.join();
    return kExitFailure;
  }
  pthread_kill(watcher.native_handle(), kWatcherStop);
  watcher.join();
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (!summary.ok()) {
    // The runner's InvalidArgument is bad input (exit 2); any other error of it a failure (1).
    if (summary.status().code() == absl::StatusCode::kInvalidArgument) return summary.status();
    return absl::InternalError(summary.status().message());
  }
  return session.Emit(interrupt_signal.load(), summary->deferred);
}

}  // namespace

void RegisterRunCommand(CommandRegistry& registry) {
  registry.Add({.name = "run",
                .summary = "run a plan on this machine (no servers) and print its results",
                .usage = "fleetmark run PLAN|- [--format table|json|csv|gbench-json] "
                         "[--out FILE [--quiet]] [--filter REGEX] [--quick] [--wide]",
                .runs_cases = true,
                .run = RunCommand});
}

}  // namespace fleetmark::cli
