// Contention: how much of the machine other work used while a slice (one process of a
// case) ran — other processes' CPU time and the hypervisor's steal time, from
// /proc/stat's aggregate "cpu" line, against the slice's own CPU time (the runner and
// its children, getrusage). A benchmark shares the machine with whatever else runs, and
// a co-runner changes what is measured (co-located tenants as a source of performance
// variation: Leitner & Cito, "Patterns in the chaos — a study of performance variation
// and predictability in public IaaS clouds", ACM TOIT 16(3), 2016). The
// runner (engine/runner/runner.h) re-measures a contended process (kContentionRetries)
// and marks a case still contended (CaseResult.contended, other_cpu_share); its group's verdict then
// stays undecided unless the gap is beyond what that share can explain
// (engine/measure/verdict.h, Contention).
//
//   ContentionProbe probe;                 // reads /proc/stat and rusage now
//   RunTheSlice();
//   std::optional<double> share = probe.Finish();
//   bool contended = share && *share > kContentionThreshold;
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fleetmark::engine {

// A slice is contended when other work took more than this share of the machine's CPU
// time during it. A quarter of the machine: on the 2-CPU devices fleetmark is tuned on
// one busy co-runner is 0.5 (always caught) while background daemons, the agent and
// the kernel's own work stay well under 0.05; on 8 CPUs it takes two busy cores, which
// already shift a pool's throughput by more than the 2 % a verdict's margin allows,
// and one core (0.125) — which the verdict's paired rounds absorb — passes.
inline constexpr double kContentionThreshold = 0.25;

// A contended process is measured again up to this many times: much of what else runs
// on a developer's machine or a shared host comes in bursts of a second or two (a
// build step, an indexer, a git checkout), and a process that waits one out measures
// the strategy, not the burst. Two processes in a row still contended after all their
// re-measures (kPersistentContentionStreak) mean the other work is persistent (a CPU
// hog, a busy tenant): from then on each process is measured again once, until one is
// clean — re-measuring more under persistent load only multiplies the run's time.
inline constexpr int kContentionRetries = 3;
inline constexpr int kPersistentContentionStreak = 2;

// Fewer ticks than this in a window (all CPUs together, USER_HZ, usually 100/s: 0.1 s
// on 2 CPUs) measure too coarsely to judge: OtherCpuShare gives nullopt.
inline constexpr uint64_t kMinWindowTicks = 20;

// The aggregate "cpu" line of /proc/stat (proc(5)), ticks summed over all CPUs.
struct ProcStatTimes {
  uint64_t total = 0;  // user nice system idle iowait irq softirq steal
  uint64_t busy = 0;   // user nice system irq softirq (guest time is inside user/nice)
  uint64_t steal = 0;  // taken by the hypervisor for other guests
};

// Parses /proc/stat text. InvalidArgument when there is no "cpu" line with at least the
// four fields user nice system idle, or a field is not a number. Pure.
absl::StatusOr<ProcStatTimes> ParseProcStat(std::string_view text);

// The share of the machine's CPU time over a window that went to other work:
// (Δbusy + Δsteal − own) / Δtotal, where own = `own_cpu_seconds` × `ticks_per_second`
// and Δtotal = the machine's CPUs × the wall time in ticks (the total of the aggregate
// line, on the same clock as the busy ticks so their rounding cancels). Clamped to
// [0, 1]; nullopt when Δtotal < kMinWindowTicks or a counter went backwards. Pure.
std::optional<double> OtherCpuShare(const ProcStatTimes& before, const ProcStatTimes& after, double own_cpu_seconds,
                                    double ticks_per_second);

// Reads the /proc/stat text (tests inject fixtures).
using ProcStatReader = std::function<absl::StatusOr<std::string>()>;

// The real reader: the contents of /proc/stat.
absl::StatusOr<std::string> ReadProcStat();

// One window: the constructor reads /proc/stat and this process's own CPU time (itself
// and its reaped children, getrusage RUSAGE_SELF + RUSAGE_CHILDREN: a slice's child is
// reaped before Finish); Finish reads them again and gives OtherCpuShare, or nullopt
// when /proc/stat could not be read or parsed. Not thread-safe; one window per object.
class ContentionProbe {
 public:
  explicit ContentionProbe(ProcStatReader reader = nullptr);
  std::optional<double> Finish();

 private:
  ProcStatReader reader_;
  std::optional<ProcStatTimes> before_;
  double own_before_seconds_ = 0;
};

}  // namespace fleetmark::engine
