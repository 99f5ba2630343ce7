#include "engine/energy/energy_sampler.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/common/status_macros.h"

namespace fleetmark::engine::energy {

double MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

absl::Status EnergySeries::Add(double at_s, double joules) {
  if (!std::isfinite(at_s) || !std::isfinite(joules) ||
      (!readings_.empty() && (at_s <= readings_.back().at_s || joules < readings_.back().joules))) {
    return absl::InvalidArgumentError(absl::StrCat("energy reading ", joules, " J at ", at_s,
                                                   " s: not after the previous reading, or lower, or not finite"));
  }
  readings_.push_back({at_s, joules});
  return absl::OkStatus();
}

absl::StatusOr<double> EnergySeries::JoulesAt(double at_s) const {
  if (readings_.empty() || at_s < readings_.front().at_s || at_s > readings_.back().at_s) {
    return absl::OutOfRangeError(absl::StrCat(
        "energy: the span to cut (", at_s, " s) is outside the sampled span",
        readings_.empty() ? " (no readings)"
                          : absl::StrCat(" [", readings_.front().at_s, " s, ", readings_.back().at_s, " s]")));
  }
  auto after =
      std::lower_bound(readings_.begin(), readings_.end(), at_s, [](const Reading& r, double t) { return r.at_s < t; });
  if (after->at_s == at_s || after == readings_.begin()) return after->joules;
  const Reading& before = *(after - 1);
  const double share = (at_s - before.at_s) / (after->at_s - before.at_s);
  return before.joules + share * (after->joules - before.joules);
}

absl::StatusOr<double> EnergySeries::JoulesBetween(double t0_s, double t1_s) const {
  if (!(t0_s <= t1_s)) return absl::InvalidArgumentError(absl::StrCat("energy span ", t0_s, " s .. ", t1_s, " s"));
  FLEETMARK_ASSIGN_OR_RETURN(double start, JoulesAt(t0_s));
  FLEETMARK_ASSIGN_OR_RETURN(double end, JoulesAt(t1_s));
  return end - start;
}

absl::StatusOr<std::unique_ptr<EnergySampler>> EnergySampler::Start(const EnergyFiles& files,
                                                                    const std::vector<EnergySource>& sources,
                                                                    absl::Duration period) {
  if (sources.empty()) return absl::InvalidArgumentError("energy sampler: no sources");
  if (period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("energy sampler: period ", absl::FormatDuration(period), " <= 0"));
  }
  std::vector<EnergyMeter> meters;
  const double before = MonotonicSeconds();
  for (const EnergySource& source : sources) {
    FLEETMARK_ASSIGN_OR_RETURN(EnergyMeter meter, EnergyMeter::Start(files, source, before));
    meters.push_back(std::move(meter));
  }
  std::unique_ptr<EnergySampler> sampler(new EnergySampler(std::move(meters), period));
  for (const EnergyMeter& meter : sampler->meters_) sampler->series_.charging |= meter.saw_charging();
  FLEETMARK_RETURN_IF_ERROR(sampler->series_.Add((before + MonotonicSeconds()) / 2, 0));
  sampler->thread_ = std::thread([s = sampler.get()] { s->Loop(); });
  return sampler;
}

void EnergySampler::Loop() {
  while (!stop_.load(std::memory_order_relaxed)) {
    absl::SleepFor(period_);
    SampleNow(/*last=*/false);
  }
}

void EnergySampler::SampleNow(bool last) {
  const double before = MonotonicSeconds();
  if (!series_.readings().empty() && before <= series_.readings().back().at_s) return;
  double joules = 0;
  for (EnergyMeter& meter : meters_) {
    if (absl::Status sampled = meter.Sample(before); !sampled.ok()) {
      if (error_.ok()) error_ = sampled;
      return;
    }
    joules += meter.joules();
    series_.charging |= meter.saw_charging();
  }
  // The reading stands at the middle of its reads; a read that was held up (the thread
  // preempted) has no time to speak of: the meters keep its energy, the next reading
  // shows it. The last reading always counts (it closes the sampled span).
  const double after = MonotonicSeconds();
  if (!last && after - before > kMaxReadSeconds) return;
  if (absl::Status added = series_.Add((before + after) / 2, joules); !added.ok() && error_.ok()) error_ = added;
}

absl::StatusOr<EnergySeries> EnergySampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  SampleNow(/*last=*/true);
  if (!error_.ok()) return error_;
  return std::move(series_);
}

EnergySampler::~EnergySampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace fleetmark::engine::energy
