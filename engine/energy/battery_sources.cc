#include "engine/energy/battery_sources.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/common/status_macros.h"
#include "engine/energy/sysfs_value.h"

namespace fleetmark::engine::energy::internal {
namespace {

constexpr absl::string_view kPowerSupplyDir = "/sys/class/power_supply";

bool Has(const std::vector<std::string>& entries, absl::string_view file) {
  return std::find(entries.begin(), entries.end(), file) != entries.end();
}

// Whether a supply other than a battery (USB, Mains, Wireless, ...) is online.
bool ExternalPowerOnline(const EnergyFiles& files, std::string* which) {
  for (const std::string& name : files.List(kPowerSupplyDir)) {
    const std::string dir = absl::StrCat(kPowerSupplyDir, "/", name);
    absl::StatusOr<std::string> type = files.Read(absl::StrCat(dir, "/type"));
    if (!type.ok() || *type == "Battery") continue;
    if (files.Read(absl::StrCat(dir, "/scope")).value_or("") == "Device") continue;  // a peripheral's
    absl::StatusOr<int64_t> online = ReadSysfsInt(files, absl::StrCat(dir, "/online"));
    if (online.ok() && *online > 0) {
      *which = name;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<BatteryConvention> DetectBatteryConvention(int64_t current_raw, int64_t voltage_raw,
                                                          absl::string_view status) {
  BatteryConvention convention;
  std::string voltage_unit;
  if (voltage_raw > 100'000) {
    convention.voltage_scale_v = 1e-6;
    voltage_unit = "µV";
  } else if (voltage_raw >= 1'000) {
    convention.voltage_scale_v = 1e-3;
    voltage_unit = "mV";
  }
  const double volts = static_cast<double>(voltage_raw) * convention.voltage_scale_v;
  if (voltage_unit.empty() || volts < 1 || volts > 60) {
    return absl::InvalidArgumentError(
        absl::StrCat("voltage_now ", voltage_raw, " is no battery voltage in µV or mV (1..60 V expected)"));
  }
  // INT64_MIN has no magnitude in int64: it is µA by any rule.
  const uint64_t magnitude =
      current_raw < 0 ? 0 - static_cast<uint64_t>(current_raw) : static_cast<uint64_t>(current_raw);
  std::string current_rule;
  if (magnitude >= static_cast<uint64_t>(kMicroampThreshold)) {
    convention.current_scale_a = 1e-6;
    current_rule = absl::StrCat("|current_now| >= ", kMicroampThreshold, ": µA");
  } else if (magnitude > 0) {
    convention.current_scale_a = 1e-3;
    current_rule = absl::StrCat("|current_now| < ", kMicroampThreshold, ": mA (as µA under 10 mA)");
  } else {
    convention.current_scale_a = convention.voltage_scale_v == 1e-6 ? 1e-6 : 1e-3;
    current_rule =
        absl::StrCat("current_now 0: ", convention.current_scale_a == 1e-6 ? "µA" : "mA", " like voltage_now");
  }
  std::string sign_rule;
  if (current_raw != 0 && (status == "Discharging" || status == "Charging")) {
    const int sign = current_raw < 0 ? -1 : 1;
    convention.discharge_sign = status == "Discharging" ? sign : -sign;
    sign_rule = absl::StrCat("current_now ", current_raw, " while ", status, ": ",
                             convention.discharge_sign < 0 ? "negative" : "positive", " = discharging");
  } else {
    sign_rule =
        absl::StrCat("current_now ", current_raw, " while \"", status, "\": discharge sign unknown, magnitudes used");
  }
  convention.evidence = absl::StrCat(sign_rule, "; ", current_rule, "; voltage_now ", voltage_raw, ": ", voltage_unit);
  return convention;
}

std::vector<EnergySource> DiscoverBatterySources(const EnergyFiles& files) {
  std::vector<EnergySource> sources;
  std::string external;
  const bool on_external_power = ExternalPowerOnline(files, &external);
  for (const std::string& name : files.List(kPowerSupplyDir)) {
    const std::string dir = absl::StrCat(kPowerSupplyDir, "/", name);
    absl::StatusOr<std::string> type = files.Read(absl::StrCat(dir, "/type"));
    // The rule of HostInfo.batteries (engine/topology/device_info.cc): Android names its
    // battery "battery"; a denied type file still counts by name.
    if (type.ok() ? *type != "Battery" : name != "battery") continue;
    // A peripheral's battery (a wireless mouse: scope "Device") does not feed this device.
    if (files.Read(absl::StrCat(dir, "/scope")).value_or("") == "Device") continue;
    const std::vector<std::string> entries = files.List(dir);
    EnergySource& source = sources.emplace_back();
    source.name = absl::StrCat("battery:", name);
    source.kind = SourceKind::kBattery;
    source.reading = Reading::kPower;
    source.covers =
        "the whole device as its battery feeds it (SoC, memory, screen, radios); not its consumption while charging "
        "or on external power";
    source.value_path = absl::StrCat(dir, "/current_now");
    source.voltage_path = absl::StrCat(dir, "/voltage_now");
    source.status_path = absl::StrCat(dir, "/status");
    source.on_external_power = on_external_power;
    if (on_external_power) {
      source.notes.push_back(absl::StrCat("on external power (", external,
                                          " online): the battery's current is not the device's consumption"));
    }
    if (Has(entries, "charge_counter")) {
      source.notes.push_back("charge_counter present (µAh): a cumulative cross-check, not read yet");
    }
    const std::string status = files.Read(source.status_path).value_or("unknown");
    source.charging = status == "Charging";
    if (!Has(entries, "current_now") || !Has(entries, "voltage_now")) {
      source.why_not = absl::StrCat(dir,
                                    " has no current_now and voltage_now (power_now / energy_now batteries are "
                                    "not read yet)");
      continue;
    }
    absl::StatusOr<int64_t> current = ReadSysfsInt(files, source.value_path);
    absl::StatusOr<int64_t> voltage = ReadSysfsInt(files, source.voltage_path);
    if (!current.ok() || !voltage.ok()) {
      source.why_not = std::string((current.ok() ? voltage.status() : current.status()).message());
      continue;
    }
    absl::StatusOr<BatteryConvention> convention = DetectBatteryConvention(*current, *voltage, status);
    if (!convention.ok()) {
      source.why_not = absl::StrCat(dir, ": ", convention.status().message());
      continue;
    }
    source.convention = *std::move(convention);
    const double volts = static_cast<double>(*voltage) * source.convention.voltage_scale_v;
    source.value_scale = source.convention.current_scale_a;
    source.resolution = source.convention.current_scale_a * volts;
    source.resolution_text = absl::StrFormat(
        "current_now in %s x voltage_now: steps of %g W at %.2f V; the fuel gauge updates far less often "
        "(about 1 s on many phones, 10 s or more on some) and may average",
        source.convention.current_scale_a == 1e-6 ? "µA" : "mA", source.resolution, volts);
    source.readable = true;
  }
  return sources;
}

}  // namespace fleetmark::engine::energy::internal
