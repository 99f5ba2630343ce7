// Internal to engine/runner: the energy of a plan's batch cases when the plan asks for
// it (measurement.energy; docs/energy.md, "Per case"). Decided once per run: the host's
// best readable source (engine/energy/best_source.h), or why there is none. Per process
// of a case: an idle baseline, then the process with a sampler thread running
// (engine/energy/energy_sampler.h), its timed span cut out of the readings.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/energy/best_source.h"
#include "engine/energy/case_energy.h"
#include "engine/energy/energy_files.h"
#include "engine/runner/slice.pb.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

class CaseEnergyProbe {
 public:
  // Under user-mode emulation (host.emulated): unavailable, with the host's
  // energy_unavailable reason. Else the sources `files` shows (null = the live /sys,
  // read by a SysfsEnergyFiles the probe owns): ChooseEnergySources, or unavailable
  // with EnergyUnavailableReason. `files`, when given, must outlive the probe and be
  // thread-safe.
  CaseEnergyProbe(const v1::HostInfo& host, const energy::EnergyFiles* files);

  // "" when a source measures; else why not (never empty then).
  const std::string& unavailable() const { return unavailable_; }
  const energy::EnergyChoice& choice() const { return *choice_; }  // only when available

  // Measures one process: idles for `baseline` (sleeping in steps of at most 20 ms and
  // stopping early, with the time it got, once `*cancelled` turns true; may be null),
  // then runs `execute` with the sampler running, and stores the process's energy in
  // `*energy` (nullopt when the process measured no timed repetition). The sampler's
  // first error goes to `*error` instead (nothing in `*energy`). Returns what
  // `execute` returned. Call only when unavailable() is "".
  runner::SliceResponse Measure(absl::Duration baseline, const std::function<runner::SliceResponse()>& execute,
                                const std::atomic<bool>* cancelled, std::optional<energy::ProcessEnergy>* energy,
                                std::string* error) const;

 private:
  std::unique_ptr<energy::EnergyFiles> owned_files_;
  const energy::EnergyFiles* files_ = nullptr;
  std::optional<energy::EnergyChoice> choice_;
  std::string unavailable_;
};

}  // namespace fleetmark::engine
