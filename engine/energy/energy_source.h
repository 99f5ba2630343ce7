// What an energy source is: one RAPL zone, one hwmon power or energy channel, or one
// battery, with what it covers, its resolution and whether this process can read it.
// Found by DiscoverEnergySources (discover.h), read by EnergyMeter (energy_meter.h).
// docs/energy.md describes every kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetmark::engine::energy {

enum class SourceKind {
  kRapl,         // Linux powercap zone (intel-rapl:*, also on AMD): energy_uj counter
  kHwmonEnergy,  // /sys/class/hwmon/*/energy<N>_input: µJ counter
  kHwmonPower,   // /sys/class/hwmon/*/power<N>_input (or _average): µW
  kBattery,      // /sys/class/power_supply/<battery>: current_now × voltage_now
};

// "rapl", "hwmon-energy", "hwmon-power", "battery".
absl::string_view SourceKindName(SourceKind kind);

// How a source yields energy.
enum class Reading {
  kCounter,  // cumulative µJ (value_path), differenced with wrap handling (counter_delta.h)
  kPower,    // instantaneous W, integrated over sample times (power_integral.h)
};

// The units and sign of a battery's current_now / voltage_now, detected at discovery
// (battery_sources.h says how). The kernel ABI says µA and µV with no fixed sign;
// Android's BatteryManager says negative = discharging; vendors differ on both.
struct BatteryConvention {
  double current_scale_a = 1e-6;  // amperes per unit of current_now: 1e-6 (µA) or 1e-3 (mA)
  double voltage_scale_v = 1e-6;  // volts per unit of voltage_now: 1e-6 (µV) or 1e-3 (mV)
  // The sign of current_now while discharging: -1, +1, or 0 = not determined (status
  // neither Charging nor Discharging, or a zero current): magnitudes are used.
  int discharge_sign = 0;
  // How the three were decided, e.g. "current_now -412000 while Discharging: negative =
  // discharging; |current_now| >= 10000: µA; voltage_now 3871000: µV".
  std::string evidence;
};

struct EnergySource {
  // Unique on the host: "rapl:package-0", "rapl:package-0/core", "hwmon:ina226 vdd_cpu/power1",
  // "battery:battery".
  std::string name;
  SourceKind kind = SourceKind::kRapl;
  Reading reading = Reading::kCounter;
  // What the energy includes, e.g. "CPU package 0: cores, caches, uncore, memory
  // controller (and the integrated GPU on client parts)".
  std::string covers;
  // The smallest step of a reading: joules for a counter, watts for a power source.
  double resolution = 0;
  // The resolution in words, with what is coarser than the file's unit.
  std::string resolution_text;
  // Seconds between the sensor's own updates (RAPL ~1 ms, hwmon update_interval);
  // 0 = unknown. Samples closer than this repeat a value.
  double update_interval_s = 0;
  // Whether this process could read a sample at discovery; if not, why_not says why and
  // what fixes it, e.g. "permission denied: /sys/class/powercap/intel-rapl:0/energy_uj
  // (root-only since Linux 5.10; docs/energy.md gives a udev rule)".
  bool readable = false;
  std::string why_not;
  // Lesser findings, e.g. "max_energy_range_uj unreadable: a wrap cannot be told from a
  // reset", "charge_counter present (µAh), not used".
  std::vector<std::string> notes;

  // Where a sample comes from (absolute paths below the files' root).
  std::string value_path;     // energy_uj, energy<N>_input, power<N>_input, current_now
  double value_scale = 1e-6;  // SI units per raw unit of value_path (J/µJ, W/µW); battery: unused
  uint64_t max_range_uj = 0;  // counter wraps after this (RAPL max_energy_range_uj); 0 = unknown
  std::string parent;         // a RAPL sub-zone's parent source name, else ""

  // Batteries only.
  std::string voltage_path;  // voltage_now
  std::string status_path;   // status ("Charging", "Discharging", "Full", "Not charging")
  BatteryConvention convention;
  bool charging = false;           // status "Charging" at discovery
  bool on_external_power = false;  // a USB/Mains/Wireless supply was online at discovery
};

}  // namespace fleetmark::engine::energy
