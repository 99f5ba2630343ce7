// Device facts beyond the CPU: Android build properties (getprop or build.prop files),
// batteries (sys/class/power_supply) and thermal zones by type, read below a root so
// fixture trees test them. Phones deny many of these files (SELinux): whatever cannot
// be read is "unknown", never an error. Internal to engine/topology.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/topology/sysfs.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine::topology_internal {

// Android properties: the output of root + /system/bin/getprop (run with no argument,
// "[key]: [value]" lines) when that file is executable, else key=value lines of
// root + /system/build.prop then /vendor/build.prop (the first file giving a key wins).
// nullopt when neither exists (not Android). `source` is set to "getprop" or
// "build.prop". A getprop that cannot be run falls back to the files. Thread-safe.
std::optional<std::map<std::string, std::string>> ReadAndroidProperties(const SysfsReader& reader, std::string* source);

// Parses getprop's "[key]: [value]" lines; other lines are ignored. Pure function.
std::map<std::string, std::string> ParseGetpropOutput(absl::string_view text);

// Parses build.prop "key=value" lines ('#' comments, blank lines and import lines
// ignored). Pure function.
std::map<std::string, std::string> ParseBuildProp(absl::string_view text);

// host.android from the properties (missing ones "unknown"); also sets host.os to
// "Android <release>", device_model to "<manufacturer> <model>" and soc when known.
void FillAndroid(const std::map<std::string, std::string>& props, absl::string_view source, v1::HostInfo& host);

// The power_supply entries of type Battery (or named "battery"), unreadable values
// unknown (-1 / "unknown" / temperature_known false): implausible readings appended to
// `notes`, missing or denied files' paths to `unreadable` (neither may be null).
// Thread-safe.
std::vector<v1::BatteryInfo> ReadBatteries(const SysfsReader& reader, std::vector<std::string>* notes,
                                           std::vector<std::string>* unreadable);

// host.batteries and host.thermal_zones; unreadable values noted in host.notes.
void FillPowerAndThermal(const SysfsReader& reader, v1::HostInfo& host);

}  // namespace fleetmark::engine::topology_internal
