#include "engine/energy/hwmon_sources.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "engine/energy/sysfs_value.h"

namespace fleetmark::engine::energy::internal {
namespace {

constexpr absl::string_view kHwmonDir = "/sys/class/hwmon";

// The files of one channel found in a device directory.
struct Channel {
  bool energy = false;  // energy<N>_input, else power
  int number = 0;
  std::string value_file;  // "power1_input", "power1_average", "energy1_input"
};

// "power12_input" -> {false, 12, ...}; nullopt for any other name.
std::optional<Channel> ParseChannel(absl::string_view file) {
  Channel channel;
  absl::string_view rest = file;
  if (absl::ConsumePrefix(&rest, "energy")) {
    channel.energy = true;
  } else if (!absl::ConsumePrefix(&rest, "power")) {
    return std::nullopt;
  }
  const char* end = rest.data() + rest.size();
  const auto [after, ec] = std::from_chars(rest.data(), end, channel.number);
  if (ec != std::errc() || after == rest.data() || channel.number < 0) return std::nullopt;
  const absl::string_view suffix(after, static_cast<std::size_t>(end - after));
  if (suffix != "_input" && (channel.energy || suffix != "_average")) return std::nullopt;
  channel.value_file = std::string(file);
  return channel;
}

bool IsIna(absl::string_view chip) { return absl::StartsWith(chip, "ina"); }

std::string HwmonCovers(absl::string_view chip, absl::string_view label, bool energy) {
  if (IsIna(chip)) {
    return absl::StrCat("the rail \"", label, "\" through the ", chip,
                        " shunt monitor (what the board wires to it; the label names it)");
  }
  if (chip == "amd_energy") {
    return absl::StrCat("AMD RAPL ", label, " (socket or core energy, as the label says)");
  }
  return absl::StrCat(energy ? "energy" : "power", " sensor \"", label, "\" of ", chip,
                      " (coverage as the driver documents it)");
}

}  // namespace

std::vector<EnergySource> DiscoverHwmonSources(const EnergyFiles& files) {
  std::vector<EnergySource> sources;
  for (const std::string& device : files.List(kHwmonDir)) {
    const std::string dir = absl::StrCat(kHwmonDir, "/", device);
    const std::vector<std::string> entries = files.List(dir);
    // energy<N> and power<N> by number; power<N>_input wins over power<N>_average.
    std::map<std::pair<bool, int>, Channel> channels;
    for (const std::string& file : entries) {
      std::optional<Channel> channel = ParseChannel(file);
      if (!channel) continue;
      auto [it, inserted] = channels.emplace(std::make_pair(channel->energy, channel->number), *channel);
      if (!inserted && absl::EndsWith(channel->value_file, "_input")) it->second = *channel;
    }
    if (channels.empty()) continue;
    std::string chip = ReadSysfsName(files, absl::StrCat(dir, "/name"));
    if (chip.empty()) chip = device;
    const std::string chip_label = ReadSysfsName(files, absl::StrCat(dir, "/label"));
    const std::string chip_name = chip_label.empty() ? chip : absl::StrCat(chip, " ", chip_label);
    double update_interval_s = 0;
    absl::StatusOr<int64_t> interval_ms = ReadSysfsInt(files, absl::StrCat(dir, "/update_interval"));
    if (interval_ms.ok() && *interval_ms > 0 && *interval_ms < 3'600'000) update_interval_s = *interval_ms * 1e-3;

    for (const auto& [key, channel] : channels) {
      const std::string prefix = absl::StrCat(channel.energy ? "energy" : "power", channel.number);
      const std::string channel_label = ReadSysfsName(files, absl::StrCat(dir, "/", prefix, "_label"));
      const std::string label = !channel_label.empty() ? channel_label : !chip_label.empty() ? chip_label : prefix;
      EnergySource& source = sources.emplace_back();
      source.kind = channel.energy ? SourceKind::kHwmonEnergy : SourceKind::kHwmonPower;
      source.reading = channel.energy ? Reading::kCounter : Reading::kPower;
      source.name = absl::StrCat("hwmon:", chip_name, "/", channel_label.empty() ? prefix : channel_label);
      source.covers = HwmonCovers(chip, label, channel.energy);
      source.value_path = absl::StrCat(dir, "/", channel.value_file);
      source.value_scale = 1e-6;
      source.resolution = 1e-6;
      source.update_interval_s = update_interval_s;
      source.resolution_text =
          channel.energy
              ? "energy<N>_input counts 1 µJ; the chip's own step may be coarser"
              : absl::StrCat(channel.value_file,
                             " in 1 µW steps; the chip's own step is coarser (INA226: 25 × its "
                             "current LSB), and power is sampled, so energy between samples is interpolated");
      if (update_interval_s > 0) {
        absl::StrAppend(&source.resolution_text,
                        absl::StrFormat("; the chip updates every %g ms", update_interval_s * 1e3));
      }
      if (absl::EndsWith(channel.value_file, "_average")) {
        source.notes.push_back(absl::StrCat(channel.value_file, ": an average over the driver's interval (", prefix,
                                            "_average_interval), not an instantaneous value"));
      }
      absl::StatusOr<int64_t> value = ReadSysfsNonNegative(files, source.value_path);
      if (value.ok()) {
        source.readable = true;
      } else {
        source.why_not = std::string(value.status().message());
      }
    }
  }
  return sources;
}

}  // namespace fleetmark::engine::energy::internal
