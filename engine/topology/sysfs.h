// Reads small text files (sysfs, procfs, /etc) below an optional recorded root, so the
// same code reads the live machine or an unpacked fixture. Internal to engine/topology.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "engine/topology/placement_spec.h"

namespace fleetmark::engine::topology_internal {

class SysfsReader {
 public:
  // `fsroot` "" = "/"; paths passed to the methods are absolute ("/sys/...").
  explicit SysfsReader(std::string fsroot);

  // The file's content with trailing whitespace removed; nullopt if unreadable.
  // Files are read up to 1 MiB. Thread-safe (no state).
  std::optional<std::string> Read(absl::string_view path) const;
  // The first unsigned decimal integer of the file; nullopt if absent or malformed.
  std::optional<uint64_t> ReadUint(absl::string_view path) const;
  // Like ReadUint for signed values (temperatures may be negative).
  std::optional<int64_t> ReadInt(absl::string_view path) const;
  // Entry names of a directory starting with `prefix` and followed only by digits,
  // returned as the numbers, ascending ("cpu" -> cpu0, cpu12 -> {0, 12}).
  std::vector<int> ListNumbered(absl::string_view dir, absl::string_view prefix) const;
  // Entry names of a directory (not "." or ".."), sorted; empty if unreadable.
  std::vector<std::string> ListEntries(absl::string_view dir) const;
  bool Exists(absl::string_view path) const;

  const std::string& fsroot() const { return fsroot_; }
  std::string Resolve(absl::string_view path) const;

 private:
  std::string fsroot_;
};

// The value of the "<key> <n> kB" line of `reader`'s /proc/meminfo in bytes, e.g. key
// "MemAvailable" (without the colon); nullopt if unreadable or absent. Thread-safe.
std::optional<uint64_t> ReadMeminfoField(const SysfsReader& reader, absl::string_view key);

// The machine's online CPUs from `reader`'s sys/devices/system/cpu/online, else every
// cpu<N> directory whose cpu<N>/online is not "0" (a CPU that cannot be taken offline,
// often cpu0, has no such file); empty when neither is readable. Thread-safe.
CpuSet ReadSysfsOnlineCpus(const SysfsReader& reader);

// Ascending intersection of two ascending CPU sets.
CpuSet IntersectCpus(const CpuSet& a, const CpuSet& b);

// Parses a sysfs hexadecimal CPU mask ("00000000,00000101" -> {0, 8}); InvalidArgument
// on a non-hex digit. Bits >= kMaxCpuId are ignored.
absl::StatusOr<CpuSet> ParseCpuMask(absl::string_view text);

}  // namespace fleetmark::engine::topology_internal
