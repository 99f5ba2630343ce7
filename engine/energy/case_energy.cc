#include "engine/energy/case_energy.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/measure/verdict.h"

namespace fleetmark::engine::energy {
namespace {

struct Interval {
  double mean = 0;
  double low = 0;  // 0 with one value: no interval
  double high = 0;
};

// mean +- t(0.975, k-1) s / sqrt(k) over k process values (StudentTQuantile, verdict.h).
Interval MeanInterval(const std::vector<double>& values) {
  const StudentMean m = StudentMeanOf(values, 0.975);
  if (values.size() < 2) return {.mean = m.mean};
  return {.mean = m.mean, .low = m.mean - m.half_width, .high = m.mean + m.half_width};
}

std::string Joules(double j) { return absl::StrFormat("%.3g J", j); }

// Why process `i` (1-based) cannot be resolved, or "".
std::string Unresolved(const EnergyChoice& choice, const ProcessEnergy& p, double net, size_t i) {
  if (choice.update_interval_s > 0 && p.seconds < choice.update_interval_s) {
    return absl::StrFormat("process %d: its timed span %.3g s is shorter than the source's update interval %.3g s", i,
                           p.seconds, choice.update_interval_s);
  }
  const double resolution = choice.reading == Reading::kCounter ? choice.resolution : choice.resolution * p.seconds;
  if (p.joules < resolution) {
    return absl::StrCat("process ", i, ": ", Joules(p.joules), " below the source's resolution ", Joules(resolution));
  }
  if (std::abs(net) < resolution) {
    return absl::StrCat("process ", i, ": net ", Joules(net), " (gross ", Joules(p.joules),
                        " minus the idle baseline) within the source's resolution ", Joules(resolution),
                        " of 0: the case cannot be told from idle");
  }
  return "";
}

}  // namespace

v1::CaseEnergy UnavailableCaseEnergy(absl::string_view why) {
  v1::CaseEnergy energy;
  energy.set_unavailable(std::string(why));
  return energy;
}

v1::CaseEnergy SummarizeCaseEnergy(const EnergyChoice& choice, absl::Span<const ProcessEnergy> processes,
                                   uint64_t tasks) {
  if (processes.empty()) return UnavailableCaseEnergy("no process of the case was measured");
  v1::CaseEnergy energy;
  energy.set_source(choice.id);
  energy.set_covers(choice.covers);
  energy.set_processes(static_cast<uint32_t>(processes.size()));
  std::vector<double> gross;
  std::vector<double> net;
  double joules = 0;
  double baseline_joules = 0;
  for (size_t i = 0; i < processes.size(); ++i) {
    const ProcessEnergy& p = processes[i];
    if (p.repetitions == 0 || !(p.baseline_seconds > 0) || !(p.seconds > 0)) {
      return UnavailableCaseEnergy(absl::StrCat("process ", i + 1, " has no timed span or no idle baseline"));
    }
    const double process_net = p.joules - p.seconds * p.baseline_joules / p.baseline_seconds;
    if (energy.unresolved_reason().empty()) energy.set_unresolved_reason(Unresolved(choice, p, process_net, i + 1));
    gross.push_back(p.joules / static_cast<double>(p.repetitions));
    net.push_back(process_net / static_cast<double>(p.repetitions));
    joules += p.joules;
    baseline_joules += p.baseline_joules;
    energy.set_seconds(energy.seconds() + p.seconds);
    energy.set_baseline_seconds(energy.baseline_seconds() + p.baseline_seconds);
    energy.set_charging(energy.charging() || p.charging);
  }
  const double resolution = choice.reading == Reading::kCounter
                                ? choice.resolution
                                : choice.resolution * energy.seconds() / static_cast<double>(processes.size());
  energy.set_resolution_joules(resolution);
  if (!energy.unresolved_reason().empty()) {
    energy.set_unresolved(true);
    return energy;  // never a number below the resolution
  }
  const Interval g = MeanInterval(gross);
  const Interval n = MeanInterval(net);
  energy.set_joules_per_repetition(g.mean);
  energy.set_joules_per_repetition_low(g.low);
  energy.set_joules_per_repetition_high(g.high);
  energy.set_net_joules_per_repetition(n.mean);
  energy.set_net_joules_per_repetition_low(n.low);
  energy.set_net_joules_per_repetition_high(n.high);
  if (tasks > 0) {
    energy.set_joules_per_task(g.mean / static_cast<double>(tasks));
    energy.set_net_joules_per_task(n.mean / static_cast<double>(tasks));
  }
  energy.set_mean_power_watts(joules / energy.seconds());
  energy.set_baseline_power_watts(baseline_joules / energy.baseline_seconds());
  energy.mutable_process_joules_per_repetition()->Assign(gross.begin(), gross.end());
  energy.mutable_process_net_joules_per_repetition()->Assign(net.begin(), net.end());
  return energy;
}

}  // namespace fleetmark::engine::energy
