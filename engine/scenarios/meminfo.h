// ReadMeminfoBytes: one field of /proc/meminfo (the system-wide memory counters), the
// read the resource checks (MemAvailable) and the memory scenario (KernelStack) share.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fleetmark::engine {

// The value of /proc/meminfo line "<key> <n> kB" in bytes (n * 1024), e.g. key
// "MemAvailable:" (with the colon). nullopt if the file cannot be read or has no such
// line. Reads the file on every call; thread-safe.
std::optional<uint64_t> ReadMeminfoBytes(std::string_view key);

}  // namespace fleetmark::engine
