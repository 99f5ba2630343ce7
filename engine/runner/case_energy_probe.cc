#include "engine/runner/case_energy_probe.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/energy/discover.h"
#include "engine/energy/energy_sampler.h"

namespace fleetmark::engine {

CaseEnergyProbe::CaseEnergyProbe(const v1::HostInfo& host, const energy::EnergyFiles* files) {
  if (host.emulated()) {
    unavailable_ = host.energy_unavailable().empty()
                       ? "this binary runs under user-mode emulation: its numbers measure the emulator"
                       : host.energy_unavailable();
    return;
  }
  if (files == nullptr) {
    owned_files_ = energy::SysfsEnergyFiles("");
    files = owned_files_.get();
  }
  files_ = files;
  const std::vector<energy::EnergySource> sources = energy::DiscoverEnergySources(*files_);
  choice_ = energy::ChooseEnergySources(sources);
  if (!choice_) unavailable_ = energy::EnergyUnavailableReason(sources);
}

runner::SliceResponse CaseEnergyProbe::Measure(absl::Duration baseline,
                                               const std::function<runner::SliceResponse()>& execute,
                                               const std::atomic<bool>* cancelled,
                                               std::optional<energy::ProcessEnergy>* energy, std::string* error) const {
  energy->reset();
  energy::ProcessEnergy process;
  // The idle baseline: the same sampler with nothing of the case running.
  absl::StatusOr<std::unique_ptr<energy::EnergySampler>> idle =
      energy::EnergySampler::Start(*files_, choice_->sources, energy::kEnergySamplePeriod);
  if (idle.ok()) {
    const absl::Time until = absl::Now() + baseline;
    while (absl::Now() < until && !(cancelled != nullptr && cancelled->load())) {
      absl::SleepFor(std::min(absl::Milliseconds(20), until - absl::Now()));
    }
    absl::StatusOr<energy::EnergySeries> series = (*idle)->Stop();
    if (series.ok()) {
      const auto& readings = series->readings();
      process.baseline_joules = readings.back().joules;
      process.baseline_seconds = readings.back().at_s - readings.front().at_s;
      process.charging = series->charging;
    } else {
      idle = series.status();
    }
  }
  if (!idle.ok()) {
    *error = absl::StrCat("the idle baseline's sampling failed: ", idle.status().message());
    return execute();
  }
  absl::StatusOr<std::unique_ptr<energy::EnergySampler>> sampler =
      energy::EnergySampler::Start(*files_, choice_->sources, energy::kEnergySamplePeriod);
  if (!sampler.ok()) {
    *error = absl::StrCat("sampling failed: ", sampler.status().message());
    return execute();
  }
  runner::SliceResponse response = execute();
  absl::StatusOr<energy::EnergySeries> series = (*sampler)->Stop();
  if (!series.ok()) {
    *error = absl::StrCat("sampling failed: ", series.status().message());
    return response;
  }
  const uint64_t repetitions = static_cast<uint64_t>(response.samples_ns_size()) + response.transient_samples();
  if (repetitions == 0 || response.timed_end_mono_ns() <= response.timed_start_mono_ns()) return response;
  const double start_s = static_cast<double>(response.timed_start_mono_ns()) * 1e-9;
  const double end_s = static_cast<double>(response.timed_end_mono_ns()) * 1e-9;
  absl::StatusOr<double> joules = series->JoulesBetween(start_s, end_s);
  if (!joules.ok()) {
    *error = absl::StrCat("the process's timed span: ", joules.status().message());
    return response;
  }
  process.joules = *joules;
  process.seconds = end_s - start_s;
  process.repetitions = repetitions;
  process.charging = process.charging || series->charging;
  *energy = process;
  return response;
}

}  // namespace fleetmark::engine
