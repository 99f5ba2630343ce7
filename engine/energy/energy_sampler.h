// A thread sampling a case's energy sources while its process runs, and the readings
// it leaves (docs/energy.md, "Per case"). The runner starts one around each process of
// a case and cuts the process's timed span out of the readings.
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<EnergySampler> sampler,
//                              EnergySampler::Start(files, choice.sources, kEnergySamplePeriod));
//   RunTheProcess();
//   FLEETMARK_ASSIGN_OR_RETURN(EnergySeries series, sampler->Stop());
//   FLEETMARK_ASSIGN_OR_RETURN(double joules, series.JoulesBetween(t0_s, t1_s));
//
// Times are seconds of CLOCK_MONOTONIC (MonotonicSeconds(); std::chrono::steady_clock
// on Linux), the clock a child process stamps its timed span with.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/energy/energy_files.h"
#include "engine/energy/energy_meter.h"
#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy {

// How often the sampler reads: well inside any counter's wrap period (minutes), and
// short enough that cutting a span out of the readings by linear interpolation moves
// its energy by at most the power's change over 5 ms at each end.
inline constexpr absl::Duration kEnergySamplePeriod = absl::Milliseconds(5);

// A reading whose reads took longer than this (the sampler thread preempted between
// its clock and its files) is not added to the series: its time would be uncertain by
// as much. Its energy is not lost (the next reading holds it). A reading's time is the
// middle of its reads, so a kept one is off by at most half of this: at most P x 0.5 ms
// of energy at either end of a span cut out of the readings.
inline constexpr double kMaxReadSeconds = 0.001;

// CLOCK_MONOTONIC now, s. Thread-safe.
double MonotonicSeconds();

// Cumulative energy over time: (time s, joules since the first reading), times rising.
class EnergySeries {
 public:
  struct Reading {
    double at_s = 0;
    double joules = 0;
  };
  // Appends a reading; InvalidArgument unless at_s is after the last one and joules is
  // finite and not below the last.
  absl::Status Add(double at_s, double joules);
  // The energy between t0_s and t1_s (t0 <= t1), the cumulative energy linearly
  // interpolated between the readings around each end. OutOfRange naming both spans
  // when [t0, t1] is not inside the readings' span. Pure.
  absl::StatusOr<double> JoulesBetween(double t0_s, double t1_s) const;
  const std::vector<Reading>& readings() const { return readings_; }
  bool charging = false;  // a battery sample while charging (EnergyMeter::saw_charging)

 private:
  absl::StatusOr<double> JoulesAt(double at_s) const;
  std::vector<Reading> readings_;
};

// Samples the sum of `sources` (one EnergyMeter each) every `period` on a thread of its
// own. Start and Stop are called from one thread; the sampler thread only reads files.
class EnergySampler {
 public:
  // Takes the first reading now and starts the thread. `files` must outlive the
  // sampler and be thread-safe. Errors: EnergyMeter::Start's (a source unreadable),
  // InvalidArgument for no sources or a period that is not positive.
  static absl::StatusOr<std::unique_ptr<EnergySampler>> Start(const EnergyFiles& files,
                                                              const std::vector<EnergySource>& sources,
                                                              absl::Duration period);
  // Stops the thread, takes a last reading and returns the readings; the first failed
  // read's error (naming the file) when any failed. Call once.
  absl::StatusOr<EnergySeries> Stop();
  ~EnergySampler();  // stops the thread if Stop was not called

  EnergySampler(const EnergySampler&) = delete;
  EnergySampler& operator=(const EnergySampler&) = delete;

 private:
  EnergySampler(std::vector<EnergyMeter> meters, absl::Duration period) : meters_(std::move(meters)), period_(period) {}
  void Loop();
  void SampleNow(bool last);  // on the sampler thread, or after it stopped (last)

  std::vector<EnergyMeter> meters_;
  absl::Duration period_;
  EnergySeries series_;
  absl::Status error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace fleetmark::engine::energy
