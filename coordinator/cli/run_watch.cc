#include "coordinator/cli/run_watch.h"

#include <cstdio>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "coordinator/cli/command.h"
#include "engine/common/duration_text.h"
#include "engine/common/text.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::cli {
namespace {

// Without a terminal, a progress line is printed only when a job's or the run's state
// changes, or at most every this often (a log gets no line per result).
constexpr absl::Duration kPlainProgressInterval = absl::Seconds(10);
// Reconnection backoff while the coordinator is unreachable.
constexpr absl::Duration kFirstRetry = absl::Seconds(1);
constexpr absl::Duration kMaxRetry = absl::Seconds(10);

bool Terminal(const std::string& status) { return status == "done" || status == "failed" || status == "cancelled"; }

std::string Bar(uint32_t done, uint32_t total, int width = 20) {
  const int filled = total == 0 ? 0 : static_cast<int>(static_cast<uint64_t>(std::min(done, total)) * width / total);
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, ' '), "]");
}

// What Ctrl-C (or SIGTERM) while waiting prints: the run goes on without us. Written
// by the signal handler with write(2) only (async-signal-safe), then _exit(130).
char g_detach_message[512];
size_t g_detach_length = 0;

void DetachOnSignal(int) {
  if (write(STDERR_FILENO, g_detach_message, g_detach_length) < 0) {
    // Nothing to do: the process exits either way.
  }
  _exit(kExitSignalBase + SIGINT);
}

void InstallDetachMessage(const std::string& run_id) {
  const std::string message = absl::StrCat("\n", DetachHint(run_id), "\n");
  g_detach_length = std::min(message.size(), sizeof(g_detach_message));
  std::memcpy(g_detach_message, message.data(), g_detach_length);
  struct sigaction action = {};
  action.sa_handler = DetachOnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Changes whenever the run makes progress: its state, each job's state, attempt and
// cases done.
std::string ProgressKey(const v1::RunInfo& run) {
  std::string key = absl::StrCat(run.status(), "|", run.results());
  for (const v1::JobInfo& job : run.jobs()) {
    absl::StrAppend(&key, "|", job.job_id(), ":", job.status(), ":", job.attempts(), ":", job.cases_done());
  }
  return key;
}

// The live progress lines on stderr.
class ProgressView {
 public:
  explicit ProgressView(std::optional<engine::PlanCost> cost)
      : tty_(isatty(STDERR_FILENO) != 0), eta_(std::move(cost)) {}

  void Show(const v1::RunInfo& run) {
    if (!tty_) {
      std::string states = run.status();
      for (const v1::JobInfo& job : run.jobs()) absl::StrAppend(&states, "|", job.status(), ":", job.attempts());
      const absl::Time now = SteadyNow();
      if (states == last_states_ && now - last_printed_ < kPlainProgressInterval) return;
      last_states_ = std::move(states);
      last_printed_ = now;
    }
    const absl::Time now = SteadyNow();
    eta_.Observe(run, now);
    std::string lines;
    for (const v1::JobInfo& job : run.jobs()) absl::StrAppend(&lines, JobLine(job, eta_.EtaText(job, now)), "\n");
    if (tty_) {
      // Drawn through stdio: std::cerr escapes control characters (TerminalSafeStderr).
      std::cerr.flush();
      for (size_t i = 0; i < drawn_; ++i) std::fputs("\x1b[1A\x1b[2K", stderr);
      drawn_ = static_cast<size_t>(run.jobs_size()) + 1;
    }
    std::cerr << "run " << run.run_id() << ": " << run.status() << ", " << run.results() << " results\n" << lines;
  }

  // A line of its own, left on screen (the next progress block is drawn below it).
  void Note(const std::string& line) {
    std::cerr << line << "\n";
    drawn_ = 0;
  }

 private:
  const bool tty_;
  JobEta eta_;
  size_t drawn_ = 0;
  std::string last_states_;
  absl::Time last_printed_ = absl::InfinitePast();
};

// "run X running, 3 results; job on box2 queued (0/4 cases, attempt 2), agent box2
// offline; ...": the run's last known state and, for each unfinished job, its agent's
// state (asked of the coordinator; left out if it does not answer within 5 s).
std::string Describe(ControlClient& client, const v1::RunInfo& run) {
  if (run.run_id().empty()) return "no state received from the coordinator yet";
  std::map<std::string, std::string> agent_state;
  v1::ListAgentsResponse agents;
  auto context = client.Context(std::chrono::seconds(5));
  if (client.stub().ListAgents(context.get(), v1::ListAgentsRequest(), &agents).ok()) {
    for (const v1::AgentInfo& agent : agents.agents()) agent_state[agent.name()] = agent.state();
  }
  std::vector<std::string> jobs;
  for (const v1::JobInfo& job : run.jobs()) {
    if (Terminal(job.status())) continue;
    std::string text =
        absl::StrCat("job on ", job.agent_name(), " ", job.status(), " (", job.cases_done(), "/", job.cases_total(),
                     " cases", job.attempts() > 1 ? absl::StrCat(", attempt ", job.attempts()) : "", ")");
    if (auto it = agent_state.find(job.agent_name()); it != agent_state.end()) {
      absl::StrAppend(&text, ", agent ", job.agent_name(), " ", it->second);
    }
    jobs.push_back(std::move(text));
  }
  return absl::StrCat("run ", run.run_id(), " ", run.status(), ", ", run.results(), " results",
                      jobs.empty() ? "" : "; ", absl::StrJoin(jobs, "; "));
}

}  // namespace

void JobEta::Observe(const v1::RunInfo& run, absl::Time now) {
  for (const v1::JobInfo& job : run.jobs()) {
    auto it = started_.find(job.job_id());
    if (job.status() != "running") {
      if (it != started_.end() && job.status() != "done") started_.erase(it);  // re-queued: a new attempt
      continue;
    }
    // A new attempt starts over (its cases may restart from zero).
    if (it == started_.end() || it->second.attempts != job.attempts() || job.cases_done() < it->second.cases_done) {
      started_[job.job_id()] = {now, job.cases_done(), job.attempts()};
    }
  }
}

std::optional<absl::Duration> JobEta::Eta(const v1::JobInfo& job, absl::Time now) const {
  if (job.status() != "running" || job.cases_done() >= job.cases_total()) return std::nullopt;
  auto it = started_.find(job.job_id());
  if (it == started_.end() || job.cases_done() <= it->second.cases_done) return std::nullopt;
  const double per_case = absl::ToDoubleSeconds(now - it->second.at) / (job.cases_done() - it->second.cases_done);
  return absl::Seconds(per_case * (job.cases_total() - job.cases_done()));
}

std::string JobEta::EtaText(const v1::JobInfo& job, absl::Time now) const {
  const std::optional<absl::Duration> rate = Eta(job, now);
  auto it = started_.find(job.job_id());
  if (!cost_ || job.status() != "running" || it == started_.end() || job.attempts() > 1) {
    return rate ? RoundedDuration(*rate) : "?";
  }
  return engine::RemainingText(engine::EstimateRemaining(*cost_, now - it->second.at, rate));
}

std::string JobLine(const v1::JobInfo& job, std::optional<absl::Duration> eta) {
  return JobLine(job, eta ? RoundedDuration(*eta) : std::string("?"));
}

std::string JobLine(const v1::JobInfo& job, const std::string& eta) {
  return absl::StrCat("  ", EscapeForTerminal(job.agent_name()), "  ", job.status(), "  ",
                      Bar(job.cases_done(), job.cases_total()), " ", job.cases_done(), "/", job.cases_total(),
                      job.status() == "running" ? absl::StrCat("  ETA ", eta) : "",
                      job.status() == "running" && !job.current_case_id().empty()
                          ? absl::StrCat("  case ", EscapeForTerminal(job.current_case_id()))
                          : "",
                      job.attempts() > 1 ? absl::StrCat("  attempt ", job.attempts()) : "",
                      job.message().empty() ? "" : absl::StrCat("  ", EscapeForTerminal(job.message())));
}

std::string DetachHint(const std::string& run_id) {
  return absl::StrCat("run ", run_id, " continues on the fleet; follow it with `fleetmark runs show ", run_id,
                      "`; cancel with `fleetmark runs cancel ", run_id, "`");
}

WatchResult WatchRunUntilEnded(ControlClient& client, const std::string& run_id, const WatchOptions& options) {
  InstallDetachMessage(run_id);
  WatchResult result;
  ProgressView view(options.cost);
  // Steady time throughout: a wall-clock step neither ends the watch nor stretches it.
  const absl::Time start = SteadyNow();
  const absl::Time deadline =
      options.timeout == absl::InfiniteDuration() ? absl::InfiniteFuture() : start + options.timeout;
  std::string last_key;
  absl::Time last_change = start;
  bool stall_noted = false;
  absl::Time unreachable_since = absl::InfiniteFuture();  // InfiniteFuture: reachable
  absl::Duration retry = kFirstRetry;
  while (true) {
    const absl::Time notice_at = stall_noted ? absl::InfiniteFuture() : last_change + options.no_progress_notice;
    const absl::Time stream_deadline = std::min(deadline, notice_at);
    auto context = client.Context(std::chrono::seconds(0));
    if (stream_deadline != absl::InfiniteFuture()) {
      context->set_deadline(std::chrono::system_clock::now() +
                            absl::ToChronoNanoseconds(std::max(stream_deadline - SteadyNow(), absl::ZeroDuration())));
    }
    v1::WatchRunRequest request;
    request.set_run_id(result.run.run_id().empty() ? run_id : result.run.run_id());
    auto reader = client.stub().WatchRun(context.get(), request);
    v1::RunInfo run;
    while (reader->Read(&run)) {
      if (unreachable_since != absl::InfiniteFuture()) {
        view.Note(absl::StrCat("coordinator reachable again; watching run ", run.run_id()));
        unreachable_since = absl::InfiniteFuture();
        retry = kFirstRetry;
      }
      if (std::string key = ProgressKey(run); key != last_key) {
        last_key = std::move(key);
        last_change = SteadyNow();
        stall_noted = false;
      }
      result.run = run;
      view.Show(run);
    }
    const grpc::Status status = reader->Finish();
    const absl::Time now = SteadyNow();
    if (status.ok()) {
      if (Terminal(result.run.status())) {
        result.ended = true;
        return result;
      }
      result.error = FleetmarkError(absl::AbortedError(
          absl::StrCat("watching run ", run_id, ": the coordinator ended the watch before the run ended\n",
                       DetachHint(result.run.run_id().empty() ? run_id : result.run.run_id()))));
      return result;
    }
    const std::string id = result.run.run_id().empty() ? run_id : result.run.run_id();
    if (now >= deadline) {
      // Exit 1, not 5 (DeadlineExceeded): the coordinator answered; the run took longer.
      result.error = FleetmarkError(
          absl::AbortedError(absl::StrCat("--timeout ", RoundedDuration(options.timeout),
                                          " expired: ", Describe(client, result.run), "\n", DetachHint(id))));
      return result;
    }
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && now >= notice_at) {
      view.Note(
          absl::StrCat("no progress for ", RoundedDuration(now - last_change), ": ", Describe(client, result.run)));
      stall_noted = true;
      continue;
    }
    const bool transport = client.IsTransportError(status);
    if (!transport && status.error_code() != grpc::StatusCode::UNAVAILABLE) {
      result.error = client.CallError(absl::StrCat("watching run ", run_id), status);
      return result;
    }
    if (unreachable_since == absl::InfiniteFuture()) {
      unreachable_since = now;
      view.Note(transport ? "coordinator unreachable, retrying (run continues on the agents)…"
                          : "coordinator's database unavailable, retrying (run continues on the agents)…");
    }
    if (now - unreachable_since >= options.unreachable_limit) {
      result.error =
          AppendToError(client.CallError(absl::StrCat("watching run ", id, ": gave up after ",
                                                      RoundedDuration(now - unreachable_since), " of retries"),
                                         status),
                        absl::StrCat("\n", DetachHint(id)));
      return result;
    }
    absl::SleepFor(std::min({retry, deadline - now, unreachable_since + options.unreachable_limit - now}));
    retry = std::min(retry * 2, kMaxRetry);
  }
}

}  // namespace fleetmark::cli
