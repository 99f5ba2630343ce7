#include "engine/scenarios/meminfo.h"

#include <fstream>
#include <string>

namespace fleetmark::engine {

std::optional<uint64_t> ReadMeminfoBytes(std::string_view key) {
  std::ifstream in("/proc/meminfo");
  std::string name, rest;
  uint64_t kib = 0;
  while (in >> name >> kib) {
    std::getline(in, rest);
    if (name == key) return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace fleetmark::engine
