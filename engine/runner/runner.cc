// RunPlan: shuffled interleaved rounds over the plan's cases (see runner.h).
#include "engine/runner/runner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/common/status_macros.h"
#include "engine/health/preflight.h"
#include "engine/measure/contention.h"
#include "engine/measure/contention_evidence.h"
#include "engine/measure/statistics.h"
#include "engine/measure/stop_rule.h"
#include "engine/measure/verdict.h"
#include "engine/common/partial_result.h"
#include "engine/plan/case_group.h"
#include "engine/plan/cost.h"
#include "engine/plan/plan.h"
#include "engine/runner/batch_slice.h"
#include "engine/runner/case_energy_probe.h"
#include "engine/plan/case_filter.h"
#include "engine/runner/counters_merge.h"
#include "engine/runner/this_host.h"
#include "engine/topology/host.h"
#include "engine/scenarios/case_status.h"
#include "engine/scenarios/registry.h"
#include "engine/scenarios/scenario.h"
#include "engine/topology/environment.h"

namespace fleetmark::engine {
namespace {

// Everything known about one case while its rounds run.
struct CaseState {
  v1::CaseResult result;  // spec, env, timing; statistics filled at the end
  std::vector<int64_t> samples;
  std::vector<uint32_t> process_sizes;   // samples of each slice's process, in order
  std::vector<uint32_t> process_rounds;  // the round of each of those processes
  size_t group = 0;                      // index into PlanRunner::groups_
  // Racing's verdict on this case (ELIMINATED, GROUP_*); UNSPECIFIED = the stop rule's.
  v1::StopReason race_stop = v1::STOP_REASON_UNSPECIFIED;
  std::vector<int64_t> cpu_samples;  // per repetition; kept only while it matches `samples`
  double measured_seconds = 0;       // timed repetitions so far
  bool done = false;
  v1::StopReason last_slice_stop = v1::STOP_REASON_UNSPECIFIED;
  std::set<uint32_t> cpus_used;
  std::string throttle_reason;              // the first throttled slice's verdict
  std::string drift;                        // the first unstable slice's drift ("1.2ms -> 2ms")
  std::vector<double> harness_ns_per_task;  // each calibrated slice's (process's) value
  StampedSpan span;                         // from its first slice: start/end stamps, wall steps
  // measurement.energy: each OK process's energy, the first sampling error.
  std::vector<energy::ProcessEnergy> energy_processes;
  std::string energy_error;
};

// The hierarchical bootstrap's seed of a case: FNV-1a of its id, mixed with the plan's
// shuffle seed, so the same plan, seed and samples give the same CI in every run.
uint64_t BootstrapSeed(const std::string& case_id, uint64_t shuffle_seed) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char ch : case_id) hash = (hash ^ ch) * 1099511628211ull;
  return hash ^ shuffle_seed;
}

class PlanRunner {
 public:
  PlanRunner(const v1::Plan& plan, const RunOptions& options, const ResultCallback& on_result,
             const std::atomic<bool>* cancelled)
      : options_(options),
        clock_(options.clock != nullptr ? *options.clock : SystemClock()),
        on_result_(on_result),
        cancelled_(cancelled) {
    const v1::Plan effective = options.quick ? ApplyQuick(plan) : plan;
    settings_ = ResolveMeasurement(effective.measurement());
    preconditions_ = plan.preconditions();
    // Each round's slice of a batch case runs in a fresh process: at least
    // kMinBatchProcesses, `processes` and `rounds` of them; racing adds up to the cap.
    const BatchProcesses processes = BatchProcessRange(settings_);  // engine/plan/cost.h
    min_processes_ = processes.min;
    max_processes_ = processes.max;
    if (settings_.energy()) energy_.emplace(ThisHost(), options.energy_files);
  }

  absl::Status Init(const v1::Plan& plan) {
    // The filter's cases (InvalidArgument naming --filter when it matches none).
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::CaseSpec> specs, SelectCases(plan, options_.quick, options_.filter));
    std::map<std::string, size_t> group_index;
    for (v1::CaseSpec& spec : specs) {
      if (options_.skip_case_ids.count(spec.case_id()) > 0) {
        ++summary_.skipped;
        continue;
      }
      CaseState state;
      // Batch cases that differ only in strategy are one group (engine/plan/case_group.h);
      // every other case is its own.
      const std::string key =
          IsBatch(spec) ? CasePointKey(spec) : absl::StrCat("case ", cases_.size(), " ", spec.case_id());
      auto [it, added] = group_index.try_emplace(key, groups_.size());
      if (added) groups_.emplace_back();
      groups_[it->second].push_back(cases_.size());
      state.group = it->second;
      *state.result.mutable_spec() = std::move(spec);
      cases_.push_back(std::move(state));
    }
    return absl::OkStatus();
  }

  RunSummary Run() {
    std::mt19937_64 rng(settings_.shuffle_seed() != 0 ? settings_.shuffle_seed() : std::random_device{}());
    start_ = clock_.SteadyNow();
    progress_.cases_total = static_cast<int>(cases_.size()) + summary_.skipped;
    progress_.cases_done = summary_.skipped;
    progress_.rounds = min_processes_;
    for (const CaseState& c : cases_) progress_.slices_total += IsBatch(c.result.spec()) ? min_processes_ : 1;
    for (int round = 1; round <= max_processes_; ++round) {
      // The groups in a shuffled order, the open contenders of each back to back in a
      // shuffled order of their own (runner.h, "Pairing").
      std::vector<std::pair<size_t, std::vector<size_t>>> order;  // group, its open cases
      for (size_t g = 0; g < groups_.size(); ++g) {
        std::vector<size_t> open;
        for (size_t index : groups_[g]) {
          if (!cases_[index].done) open.push_back(index);
        }
        if (open.empty()) continue;
        std::shuffle(open.begin(), open.end(), rng);
        order.emplace_back(g, std::move(open));
      }
      if (order.empty()) break;
      std::shuffle(order.begin(), order.end(), rng);
      if (round > progress_.rounds) {
        progress_.rounds = round;
        for (const auto& [g, open] : order) progress_.slices_total += static_cast<int>(open.size());
      }
      progress_.round = round;
      for (const auto& [g, open] : order) {
        for (size_t i = 0; i < open.size() && !Cancelled() && !Deferred(); ++i) {
          RunSlice(cases_[open[i]], round);
          // The group's round is complete: decide it before reporting its last slice.
          if (i + 1 == open.size() && !Cancelled() && !Deferred()) DecideAfterRound(g, round);
          ++progress_.slices_done;
          progress_.current_case = cases_[open[i]].result.spec().case_id();
          ReportProgress();
        }
      }
      if (Cancelled() || Deferred()) break;
    }
    // A deferred job reports no result for its unfinished cases: they were not measured
    // (a later attempt measures them); what was finished before stays delivered.
    if (Deferred()) return summary_;
    // Only a cancellation leaves cases unfinished. A case whose samples already meet
    // its stop rule (CI target, repetition or time cap) was finished: it keeps them. A
    // case with finished rounds is CANCELLED as a partial result over them
    // (engine/common/partial_result.h); one that started but finished no round is CANCELLED without
    // samples; one that never started has nothing to report and gets no result (only a
    // count): a cancelled 100 000-case plan must not send 100 000 empty results.
    for (CaseState& c : cases_) {
      if (c.done) continue;
      if (MeetsStopRule(c)) {
        Finish(c, v1::CASE_STATUS_OK, "");
      } else if (c.result.started_unix_ns() == 0) {
        ++summary_.not_started;
      } else if (!c.process_sizes.empty()) {
        const size_t rounds = c.process_sizes.size();
        Finish(c, v1::CASE_STATUS_CANCELLED,
               absl::StrCat("partial: interrupted after ", rounds, " of at least ", min_processes_,
                            " rounds; its numbers cover the finished round", rounds == 1 ? "" : "s", " only"));
      } else {
        Finish(c, v1::CASE_STATUS_CANCELLED, "cancelled before the case finished a round");
      }
    }
    return summary_;
  }

 private:
  bool Cancelled() const { return cancelled_ != nullptr && cancelled_->load(); }
  bool Deferred() const { return !summary_.deferred.empty(); }

  // The plan's preflight gates before a slice: the conditions they saw, or nullopt when
  // the gates kept failing (the run is deferred) or the run was cancelled meanwhile.
  std::optional<v1::EnvSnapshot> Preflight() {
    if (!HasGates(preconditions_)) return TakeEnvSnapshot();
    PreflightOutcome outcome = RunPreflight(preconditions_, options_.preflight, cancelled_);
    if (outcome.passed) return std::move(outcome.conditions);
    if (!outcome.cancelled) {
      summary_.deferred = outcome.deferred_reason;
      summary_.deferred_conditions = std::move(outcome.conditions);
    }
    return std::nullopt;
  }

  void ReportProgress() {
    if (!options_.on_progress) return;
    progress_.elapsed = clock_.SteadyNow() - start_;
    const int left = progress_.slices_total - progress_.slices_done;
    progress_.eta = progress_.slices_done == 0 ? absl::ZeroDuration()
                                               : progress_.elapsed / progress_.slices_done * std::max(left, 0);
    options_.on_progress(progress_);
  }

  void RunSlice(CaseState& c, int round) {
    v1::CaseResult& r = c.result;
    std::optional<v1::EnvSnapshot> checked = Preflight();
    if (!checked) return;  // deferred or cancelled: Run() stops
    const v1::EnvSnapshot before = std::move(*checked);
    if (round == 1) {
      *r.mutable_env_before() = before;
      c.span = StampedSpan(clock_);
      r.set_started_unix_ns(absl::ToUnixNanos(c.span.start()));
    }
    if (!IsBatch(r.spec())) {
      RunScenario(c);
      return;
    }
    runner::SliceRequest request = SliceRequestFor(c, round);
    runner::SliceResponse response;
    std::optional<double> other_share;
    // Re-measures of a contended process (contention.h, kContentionRetries): one while
    // the machine's other work has looked persistent.
    const int contention_retries = contended_streak_ >= kPersistentContentionStreak ? 1 : kContentionRetries;
    int remeasures = 0;
    std::optional<energy::ProcessEnergy> process_energy;  // the last attempt's
    for (uint32_t cooldowns = 0;;) {
      // In a child process, always: a hung repetition cannot be abandoned in-process.
      const absl::Duration watchdog = SliceWatchdog(request);
      const auto execute = [&] {
        ContentionProbe probe(options_.proc_stat_reader);
        runner::SliceResponse executed =
            options_.batch_slice_executor
                ? options_.batch_slice_executor(request, watchdog)
                : RunBatchSliceInChild(request, options_.child_executable, watchdog, cancelled_);
        other_share = probe.Finish();
        return executed;
      };
      if (energy_ && energy_->unavailable().empty() && c.energy_error.empty()) {
        response = energy_->Measure(EnergyBaseline(c, request), execute, cancelled_, &process_energy, &c.energy_error);
      } else {
        response = execute();
      }
      if (response.repetition_overrun()) {
        response.set_message(absl::StrCat(
            "overrun: ", response.message(), " (max(measurement.max_seconds_per_case, ", kMaxRepetitionOverrunSeconds,
            " s) unless the runner was given another): a repetition cannot be interrupted, so the case stops after "
            "it; use fewer tasks or less work per task, or raise max_seconds_per_case"));
      } else if (response.status() == v1::CASE_STATUS_TIMEOUT) {
        response.set_message(absl::StrCat(
            "watchdog: the slice did not end within ", absl::FormatDuration(watchdog), " (warm-up + time quota + ",
            kWatchdogRepetitions, " x the ", absl::FormatDuration(RepetitionBound()),
            " bound on one repetition): one repetition ran far past the bound, or hung, so the case is abandoned (its "
            "child process was killed): ",
            response.message()));
      }
      const v1::EnvSnapshot after = TakeEnvSnapshot();
      *r.mutable_env_after() = after;
      const ThrottleVerdict verdict = Throttled(before, after, ThisHost());
      const bool ok = response.status() == v1::CASE_STATUS_OK;
      // A throttled slice is measured again after cooling, up to cooldown_retries times.
      if (verdict.throttled && ok && cooldowns < settings_.cooldown_retries() && !Cancelled()) {
        ++cooldowns;
        absl::SleepFor(absl::Seconds(settings_.cooldown_seconds()));
        r.set_cooldown_seconds(r.cooldown_seconds() + settings_.cooldown_seconds());
        continue;
      }
      if (verdict.throttled && !r.throttled()) {
        r.set_throttled(true);
        c.throttle_reason = verdict.reason;
      }
      // A contended process (engine/measure/contention.h) is measured again.
      if (ok && other_share && *other_share > kContentionThreshold && remeasures < contention_retries && !Cancelled()) {
        ++remeasures;
        continue;
      }
      break;
    }
    if (other_share && response.status() == v1::CASE_STATUS_OK) {
      contended_streak_ = *other_share > kContentionThreshold ? contended_streak_ + 1 : 0;
    }
    if (other_share && response.status() == v1::CASE_STATUS_OK) {
      r.set_other_cpu_share(std::max(r.other_cpu_share(), *other_share));
      if (*other_share > kContentionThreshold) {
        r.set_contended(true);
        // What one wait for a CPU costs under this other work (verdict.h, Contention).
        const SchedulingDelay delay = CurrentSchedulingDelay();
        r.set_wakeup_delay_ns(std::max(r.wakeup_delay_ns(), delay.wakeup_bound_ns));
        r.set_preemption_delay_ns(std::max(r.preemption_delay_ns(), delay.preemption_bound_ns));
      }
    }
    // A cancellation: Run() decides, from the rounds finished so far (it ends the run);
    // the process it killed did not finish its round, so none of its samples are kept.
    if (response.status() == v1::CASE_STATUS_CANCELLED) return;
    if (process_energy && response.status() == v1::CASE_STATUS_OK) c.energy_processes.push_back(*process_energy);
    Merge(c, response, round);
    // An OK slice: DecideAfterRound decides once the round is over.
    if (response.status() != v1::CASE_STATUS_OK) {
      Finish(c, response.status(), response.message());
    }
  }

  // The idle baseline before a process of `c`: as long as its previous process's timed
  // span, the first one's its time quota (the longest it may take).
  static absl::Duration EnergyBaseline(const CaseState& c, const runner::SliceRequest& request) {
    if (!c.energy_processes.empty()) return absl::Seconds(c.energy_processes.back().seconds);
    return absl::Seconds(request.max_seconds());
  }

  // CaseResult.energy of a batch case of a plan with measurement.energy: why there is
  // none, or the processes' summary. Nothing when no process was measured (the status
  // says why) on a host that could have.
  void SetEnergy(CaseState& c) const {
    if (!energy_ || !IsBatch(c.result.spec())) return;
    v1::CaseResult& r = c.result;
    if (!energy_->unavailable().empty()) {
      *r.mutable_energy() = energy::UnavailableCaseEnergy(energy_->unavailable());
    } else if (!c.energy_error.empty()) {
      *r.mutable_energy() = energy::UnavailableCaseEnergy(c.energy_error);
    } else if (!c.energy_processes.empty()) {
      *r.mutable_energy() =
          energy::SummarizeCaseEnergy(energy_->choice(), c.energy_processes, r.spec().batch().tasks());
    }
  }

  // The scheduling-delay probe's figures (engine/measure/scheduling_delay.h) for the
  // moment just after a contended process: measured again once kSchedulingDelayReuse
  // has passed since the last probe, else that probe's (persistent other work would
  // otherwise add ~0.2-0.4 s to every process; within seconds the load is the same).
  SchedulingDelay CurrentSchedulingDelay() {
    const absl::Time now = clock_.SteadyNow();
    if (!last_delay_ || now - last_delay_at_ >= kSchedulingDelayReuse) {
      last_delay_ = options_.scheduling_delay_probe ? options_.scheduling_delay_probe() : MeasureSchedulingDelay();
      last_delay_at_ = clock_.SteadyNow();
    }
    return *last_delay_;
  }

  // Whether case `c` has spent its budget: its time or its repetitions.
  bool BudgetSpent(const CaseState& c) const {
    return c.measured_seconds >= settings_.max_seconds_per_case() ||
           c.samples.size() >= static_cast<size_t>(settings_.max_repetitions());
  }

  // The processes a case is planned for: a racing contender's cap, else the minimum.
  int PlannedProcesses(const CaseState& c) const { return Racing(c) ? max_processes_ : min_processes_; }

  // A batch case in a group of two or more contenders: cases still measuring or
  // finished OK (one that failed is no contender).
  bool Racing(const CaseState& c) const {
    if (!IsBatch(c.result.spec())) return false;
    int contenders = 0;
    for (size_t index : groups_[c.group]) {
      const CaseState& m = cases_[index];
      if (!m.done || m.result.status() == v1::CASE_STATUS_OK) ++contenders;
    }
    return contenders >= 2;
  }

  // After round `round`: finishes the cases of group `g` that need no more processes.
  // Racing (runner.h): from min_processes_ on, DecideGroup over the group's open
  // contenders; OUT ones are ELIMINATED, a decided or equivalent group ends, an open one
  // goes on up to the cap or a contender's budget (then GROUP_UNDECIDED), and one with a
  // contended contender ends undecided (more processes under contention cannot decide
  // it). Other cases end after min_processes_ with their stop rule's reason.
  void DecideAfterRound(size_t g, int round) {
    std::vector<size_t> open;
    for (size_t index : groups_[g]) {
      if (!cases_[index].done && IsBatch(cases_[index].result.spec())) open.push_back(index);
    }
    if (open.empty() || round < min_processes_) return;
    if (open.size() < 2 || !Racing(cases_[open.front()])) {
      for (size_t index : open) Finish(cases_[index], v1::CASE_STATUS_OK, "");
      return;
    }
    std::vector<Contender> contenders;
    for (size_t index : open) contenders.push_back(ContenderOf(cases_[index]));
    VerdictOptions verdict_options;
    verdict_options.min_processes = min_processes_;
    const ResidualSpread spread = DeviceSpread(AllGroups());
    verdict_options.spread = spread.prior_sigma;
    verdict_options.spread_dof = spread.prior_dof;
    const GroupVerdict verdict = DecideGroup(contenders, verdict_options);
    std::set<std::string> out;
    for (const PairedRatio& other : verdict.others) {
      // OUT, or SLOWER in a group that ends equivalent without it (verdict.h).
      if (other.out || (other.slower && verdict.kind == VerdictKind::kEquivalent)) out.insert(other.name);
    }
    const bool contended =
        std::any_of(open.begin(), open.end(), [&](size_t i) { return cases_[i].result.contended(); });
    const bool out_of_time = round >= max_processes_ ||
                             std::any_of(open.begin(), open.end(), [&](size_t i) { return BudgetSpent(cases_[i]); });
    for (size_t index : open) {
      CaseState& c = cases_[index];
      if (out.count(c.result.spec().strategy().label()) > 0) {
        c.race_stop = v1::STOP_REASON_ELIMINATED;
      } else if (verdict.kind == VerdictKind::kDecided) {
        c.race_stop = v1::STOP_REASON_GROUP_DECIDED;
      } else if (verdict.kind == VerdictKind::kEquivalent) {
        c.race_stop = v1::STOP_REASON_GROUP_EQUIVALENT;
      } else if (contended || out_of_time) {
        c.race_stop = v1::STOP_REASON_GROUP_UNDECIDED;
      } else {
        continue;  // still open: another process next round
      }
      Finish(c, v1::CASE_STATUS_OK, "");
    }
  }

  // A case as a contender of its group: its process medians tagged with their rounds.
  Contender ContenderOf(const CaseState& c) const {
    Contender contender;
    contender.name = c.result.spec().strategy().label();
    contender.rounds = c.process_rounds;
    contender.process_medians_ns = ProcessMedians(c.samples, c.process_sizes);
    SetContention(c.result, contender);
    return contender;
  }

  // Every group of batch cases measured so far, as contenders (DeviceSpread's input:
  // the residual noise of the run, after the round effects each group shares). A case
  // that failed is no contender.
  std::vector<std::vector<Contender>> AllGroups() const {
    std::vector<std::vector<Contender>> out;
    for (const std::vector<size_t>& group : groups_) {
      std::vector<Contender> contenders;
      for (size_t index : group) {
        const CaseState& c = cases_[index];
        if (!IsBatch(c.result.spec()) || c.process_sizes.empty()) continue;
        if (c.done && c.result.status() != v1::CASE_STATUS_OK) continue;
        contenders.push_back(ContenderOf(c));
      }
      if (contenders.size() >= 2) out.push_back(std::move(contenders));
    }
    return out;
  }

  // One process of case `c`: the whole warm-up (every process is fresh), and its share
  // of what is left of the case's budget over its planned processes. The process stops
  // on its own median's CI target (a within-process target: more samples in one process
  // cannot narrow the interval over processes) or when its share runs out.
  runner::SliceRequest SliceRequestFor(const CaseState& c, int round) const {
    runner::SliceRequest request;
    *request.mutable_spec() = c.result.spec();
    request.set_warmup_seconds(settings_.warmup_seconds());
    const int processes_left = std::max(1, PlannedProcesses(c) - round + 1);
    const int64_t reps_left = std::max<int64_t>(
        1, static_cast<int64_t>(settings_.max_repetitions()) - static_cast<int64_t>(c.samples.size()));
    request.set_max_repetitions(static_cast<uint32_t>((reps_left + processes_left - 1) / processes_left));
    const double seconds_left = std::max(0.0, settings_.max_seconds_per_case() - c.measured_seconds);
    request.set_max_seconds(seconds_left / processes_left);
    // The minimum measuring time (engine/measure/stop_rule.h): every fresh process gets
    // its own share, whatever earlier ones spent (each has its own transient to settle).
    request.set_min_seconds(settings_.min_seconds_per_case() / min_processes_);
    request.set_target_ci_percent(settings_.target_ci_percent());
    request.set_min_samples(static_cast<uint32_t>((settings_.min_repetitions() + min_processes_ - 1) / min_processes_));
    request.set_include_setup(settings_.include_setup());
    request.set_repetition_bound_seconds(absl::ToDoubleSeconds(RepetitionBound()));
    return request;
  }

  // The longest one repetition may take: the bound plan validation guarantees is
  // reachable, max(max_seconds_per_case, kMaxRepetitionOverrunSeconds), unless the
  // caller set one.
  absl::Duration RepetitionBound() const {
    if (options_.repetition_bound > absl::ZeroDuration()) return options_.repetition_bound;
    return absl::Seconds(RepetitionBoundSeconds(settings_));  // engine/plan/cost.h
  }

  // A slice runs its warm-up and its time quota, each of which may end with one
  // repetition over it, plus starting and stopping the strategy and the process (also
  // given one bound). Past that it is hung.
  absl::Duration SliceWatchdog(const runner::SliceRequest& request) const {
    return absl::Seconds(request.warmup_seconds() + request.max_seconds()) + kWatchdogRepetitions * RepetitionBound();
  }

  // Whether the case's samples so far meet its whole stop rule (not a slice's share).
  bool MeetsStopRule(const CaseState& c) const {
    if (c.samples.empty()) return false;
    return CaseDecision(c).stop;
  }

  // The case's stop rule over all its samples (the hierarchical CI over its processes).
  // judge_only: the final verdict on the samples taken, without min_seconds_per_case.
  StopDecision CaseDecision(const CaseState& c, bool judge_only = false) const {
    StopRuleOptions rule = CaseStopRule();
    if (judge_only) rule.min_time = absl::ZeroDuration();
    // Any kMinBatchProcesses processes may meet it (a cancelled run keeps such a case).
    rule.processes = kMinBatchProcesses;
    rule.min_process_repetitions = (settings_.min_repetitions() + min_processes_ - 1) / min_processes_;
    rule.bootstrap_seed = BootstrapSeed(c.result.spec().case_id(), settings_.shuffle_seed());
    return DecideStop(c.samples, c.process_sizes, rule, absl::Seconds(c.measured_seconds));
  }

  StopRuleOptions CaseStopRule() const {
    StopRuleOptions rule;
    rule.target_ci_percent = settings_.target_ci_percent();
    rule.min_repetitions = settings_.min_repetitions();
    rule.max_repetitions = settings_.max_repetitions();
    rule.max_time = absl::Seconds(settings_.max_seconds_per_case());
    rule.min_time = absl::Seconds(settings_.min_seconds_per_case());
    return rule;
  }

  void Merge(CaseState& c, const runner::SliceResponse& response, int round) {
    v1::CaseResult& r = c.result;
    c.samples.insert(c.samples.end(), response.samples_ns().begin(), response.samples_ns().end());
    if (response.samples_ns_size() > 0) {
      c.process_sizes.push_back(static_cast<uint32_t>(response.samples_ns_size()));
      c.process_rounds.push_back(static_cast<uint32_t>(round));
    }
    c.cpu_samples.insert(c.cpu_samples.end(), response.cpu_samples_ns().begin(), response.cpu_samples_ns().end());
    c.measured_seconds += response.measured_seconds();
    if (response.synthetic_ns_per_iteration() > 0) {
      r.add_synthetic_ns_per_iteration(response.synthetic_ns_per_iteration());
    }
    MergeCounters(response.counters(), *r.mutable_counters());
    r.set_threads_used(std::max(r.threads_used(), response.threads_used()));
    r.set_peak_in_flight(std::max(r.peak_in_flight(), response.peak_in_flight()));
    c.cpus_used.insert(response.cpus_used().begin(), response.cpus_used().end());
    if (response.stop_reason() != v1::STOP_REASON_UNSPECIFIED) {
      c.last_slice_stop = response.stop_reason();
    }
    r.set_transient_samples(r.transient_samples() + response.transient_samples());
    if (response.harness_ns_per_task() > 0) c.harness_ns_per_task.push_back(response.harness_ns_per_task());
    if (response.unstable() && !r.unstable()) {
      r.set_unstable(true);
      c.drift = response.drift();
    }
  }

  void RunScenario(CaseState& c) {
    ScenarioContext ctx;
    ctx.cancelled = cancelled_;
    ctx.child_executable = options_.child_executable;
    absl::StatusOr<v1::CaseResult> result = RunScenarioCase(c.result.spec(), ctx);
    *c.result.mutable_env_after() = TakeEnvSnapshot();
    const ThrottleVerdict verdict = Throttled(c.result.env_before(), c.result.env_after(), ThisHost());
    if (!result.ok()) {
      Finish(c, CaseStatusFor(result.status()), std::string(result.status().message()));
      return;
    }
    // Keep the runner's spec, environment and timing; take everything else.
    v1::CaseResult merged = std::move(*result);
    *merged.mutable_spec() = c.result.spec();
    *merged.mutable_env_before() = c.result.env_before();
    *merged.mutable_env_after() = c.result.env_after();
    merged.set_started_unix_ns(c.result.started_unix_ns());
    merged.set_throttled(merged.throttled() || verdict.throttled);
    if (merged.status() == v1::CASE_STATUS_UNSPECIFIED) merged.set_status(v1::CASE_STATUS_OK);
    MarkUnmeasured(merged);  // zero completions: not OK, no median
    const v1::CaseStatus status = merged.status();
    const std::string message = merged.message();
    c.result = std::move(merged);
    c.samples.assign(c.result.samples_ns().begin(), c.result.samples_ns().end());
    Finish(c, status, message);
  }

  void Finish(CaseState& c, v1::CaseStatus status, const std::string& message) {
    v1::CaseResult& r = c.result;
    c.done = true;
    r.set_status(status);
    r.set_message(message);
    r.set_run_id(options_.run_id);
    r.set_job_id(options_.job_id);
    r.set_engine_version(FLEETMARK_ENGINE_VERSION);
    *r.mutable_limits() = DetectResourceLimits("", ThisHost().limits().machine_cpus());
    if (!c.span.started()) c.span = StampedSpan(clock_);  // ended before its first slice
    r.set_started_unix_ns(absl::ToUnixNanos(c.span.start()));
    r.set_finished_unix_ns(absl::ToUnixNanos(c.span.End()));
    r.mutable_samples_ns()->Assign(c.samples.begin(), c.samples.end());
    r.clear_cpu_samples_ns();
    if (c.cpu_samples.size() == c.samples.size()) {
      r.mutable_cpu_samples_ns()->Assign(c.cpu_samples.begin(), c.cpu_samples.end());
    }
    r.clear_cpus_used();
    for (uint32_t cpu : c.cpus_used) r.add_cpus_used(cpu);
    r.set_quick(options_.quick);
    if (!c.samples.empty() && !IsBatch(r.spec())) {
      *r.mutable_stats() = ComputeStatistics(c.samples);
    } else if (!c.samples.empty()) {
      *r.mutable_stats() = ComputeHierarchicalStatistics(c.samples, c.process_sizes,
                                                         BootstrapSeed(r.spec().case_id(), settings_.shuffle_seed()));
      r.clear_process_medians_ns();
      for (double m : ProcessMedians(c.samples, c.process_sizes)) r.add_process_medians_ns(m);
      r.mutable_process_sample_counts()->Assign(c.process_sizes.begin(), c.process_sizes.end());
      r.mutable_process_rounds()->Assign(c.process_rounds.begin(), c.process_rounds.end());
      r.set_between_process_share(BetweenProcessShare(c.samples, c.process_sizes));
      // The next invocation runs at another moment of the machine (statistics.h).
      WidenNextForRoundDrift(*r.mutable_stats(), RoundSpread(AllGroups()));
    }
    if (IsBatch(r.spec()) && !c.samples.empty() && status != v1::CASE_STATUS_CANCELLED) {
      r.set_stop_reason(c.race_stop != v1::STOP_REASON_UNSPECIFIED ? c.race_stop : FinalStopReason(c));
    }
    SetHarnessCost(c);
    SetEnergy(c);
    if (r.throttled() && status == v1::CASE_STATUS_OK && r.message().empty()) {
      r.set_message(absl::StrCat("throttled: ", c.throttle_reason));
    }
    if (r.contended() && status == v1::CASE_STATUS_OK) {
      r.set_message(absl::StrCat(r.message(), r.message().empty() ? "" : "; ", "contended: other work took ",
                                 std::lround(r.other_cpu_share() * 100),
                                 "% of the machine's CPU time while a process ran (above ",
                                 std::lround(kContentionThreshold * 100),
                                 "%, also when measured again): its verdict holds only beyond what that can explain"));
    }
    if (r.unstable() && status == v1::CASE_STATUS_OK) {
      r.set_message(absl::StrCat(r.message(), r.message().empty() ? "" : "; ",
                                 "unstable: the samples still drifted when the budget ran out",
                                 c.drift.empty() ? "" : absl::StrCat(" (halves' medians ", c.drift, ")"),
                                 "; raise max_seconds_per_case or warmup_seconds"));
    }
    // Honest about a budget one repetition overran (within the bound on one repetition):
    // every process measures at least one repetition after at least one of warm-up.
    if (IsBatch(r.spec()) && status == v1::CASE_STATUS_OK && !c.samples.empty()) {
      const int64_t longest = *std::max_element(c.samples.begin(), c.samples.end());
      if (absl::Nanoseconds(longest) > absl::Seconds(settings_.max_seconds_per_case())) {
        r.set_message(absl::StrCat(
            r.message(), r.message().empty() ? "" : "; ", "over budget: one repetition took up to ",
            absl::FormatDuration(absl::Trunc(absl::Nanoseconds(longest), absl::Milliseconds(1))),
            ", more than the case's ", absl::FormatDuration(absl::Seconds(settings_.max_seconds_per_case())),
            " budget (max_seconds_per_case): each of its ", c.process_sizes.size(),
            " processes ran at least one warm-up and one timed repetition"));
      }
    }
    // A condition of the case, as throttling is: its stamps are right, but anything
    // else that read the wall clock meanwhile (other machines' logs, the job's times) may
    // not line up with them.
    if (const absl::Duration step = c.span.WallStep(); absl::AbsDuration(step) > kWallClockStep) {
      r.set_message(absl::StrCat(r.message(), r.message().empty() ? "" : "; ", "clock: the wall clock was stepped by ",
                                 absl::FormatDuration(absl::Trunc(step, absl::Milliseconds(1))),
                                 " during the case; its start is the wall clock then and its end the start plus the "
                                 "case's steady duration"));
    }
    switch (status) {
      case v1::CASE_STATUS_OK:
        ++summary_.ok;
        break;
      case v1::CASE_STATUS_UNSUPPORTED:
        ++summary_.unsupported;
        break;
      case v1::CASE_STATUS_CANCELLED:
        ++summary_.cancelled;
        if (IsPartialResult(r)) ++summary_.partial;
        break;
      default:
        ++summary_.failed;
        break;
    }
    ++summary_.cases;
    ++progress_.cases_done;
    if (on_result_) on_result_(r);
  }

  // The harness's own cost (CaseResult.harness_*): the median of the processes'
  // calibrations, its share of the case's median, and the flag above kHarnessShareLimit.
  static void SetHarnessCost(CaseState& c) {
    v1::CaseResult& r = c.result;
    if (c.harness_ns_per_task.empty()) return;
    r.set_harness_ns_per_task(Median(c.harness_ns_per_task));
    // Expanded specs always carry their task count (ExpandPlan fills the default).
    const double batch_ns = r.harness_ns_per_task() * r.spec().batch().tasks();
    if (r.stats().median_ns() <= 0 || batch_ns <= 0) return;
    r.set_harness_share(batch_ns / r.stats().median_ns());
    r.set_harness_heavy(r.harness_share() > kHarnessShareLimit);
  }

  // CI_TARGET if the merged samples meet the target; otherwise the cap that ended the
  // last slice (its repetition or time quota, the case's budget split over rounds).
  // An unstable case never claims CI_TARGET: its budget ran out while it drifted.
  // min_seconds_per_case only holds back an early stop: a case whose cap came first but
  // whose merged samples meet the CI target reports CI_TARGET (docs/output.md: "(rep cap)" marks a
  // CI that missed its target).
  v1::StopReason FinalStopReason(const CaseState& c) const {
    StopDecision d = CaseDecision(c, /*judge_only=*/true);
    if (d.stop && !(c.result.unstable() && d.reason == v1::STOP_REASON_CI_TARGET)) return d.reason;
    return c.last_slice_stop == v1::STOP_REASON_MAX_REPETITIONS ? v1::STOP_REASON_MAX_REPETITIONS
                                                                : v1::STOP_REASON_MAX_TIME;
  }

  const RunOptions& options_;
  const Clock& clock_;
  const ResultCallback& on_result_;
  const std::atomic<bool>* cancelled_;
  v1::MeasurementSettings settings_;
  v1::Preconditions preconditions_;
  int min_processes_ = static_cast<int>(kMinBatchProcesses);    // per batch case, every mode
  int max_processes_ = static_cast<int>(kDefaultMaxProcesses);  // racing's cap
  std::optional<CaseEnergyProbe> energy_;                       // measurement.energy only
  int contended_streak_ = 0;                   // processes in a row still contended after their re-measures
  std::optional<SchedulingDelay> last_delay_;  // CurrentSchedulingDelay's last probe, and when
  absl::Time last_delay_at_;
  std::vector<CaseState> cases_;
  std::vector<std::vector<size_t>> groups_;  // indices into cases_, in plan order
  RunProgress progress_;
  RunSummary summary_;
  absl::Time start_;  // steady
};

}  // namespace

v1::CaseStatus CaseStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return v1::CASE_STATUS_OK;
    case absl::StatusCode::kUnimplemented:
      return v1::CASE_STATUS_UNSUPPORTED;
    case absl::StatusCode::kResourceExhausted:
      return v1::CASE_STATUS_RESOURCE_EXHAUSTED;
    case absl::StatusCode::kDeadlineExceeded:
      return v1::CASE_STATUS_TIMEOUT;
    case absl::StatusCode::kCancelled:
      return v1::CASE_STATUS_CANCELLED;
    default:
      return v1::CASE_STATUS_FAILED;
  }
}

absl::StatusOr<RunSummary> RunPlan(const v1::Plan& plan, const RunOptions& options, const ResultCallback& on_result,
                                   const std::atomic<bool>* cancelled) {
  FLEETMARK_RETURN_IF_ERROR(ValidatePlan(plan));
  PlanRunner runner(plan, options, on_result, cancelled);
  FLEETMARK_RETURN_IF_ERROR(runner.Init(plan));
  return runner.Run();
}

}  // namespace fleetmark::engine
