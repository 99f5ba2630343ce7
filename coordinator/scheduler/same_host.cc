#include "coordinator/scheduler/same_host.h"

#include <algorithm>

namespace fleetmark::scheduler {

bool IsHostIdText(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  }
  return true;
}

bool OnOneHost(const HostIdentity& a, const HostIdentity& b) {
  return !a.machine_id.empty() && !a.boot_id.empty() && a.machine_id == b.machine_id && a.boot_id == b.boot_id;
}

bool TakeTurns(const HostIdentity& a, const HostIdentity& b) {
  return OnOneHost(a, b) && !(a.exclusive_cpus && b.exclusive_cpus);
}

std::string ShortHostId(const HostIdentity& host) {
  if (host.machine_id.empty() || host.boot_id.empty()) return "";
  return std::string(host.machine_id.substr(0, 8));
}

std::vector<std::vector<size_t>> SameHostAs(const std::vector<HostIdentity>& hosts) {
  std::vector<std::vector<size_t>> same(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) {
    for (size_t j = i + 1; j < hosts.size(); ++j) {
      if (OnOneHost(hosts[i], hosts[j])) {
        same[i].push_back(j);
        same[j].push_back(i);
      }
    }
  }
  for (std::vector<size_t>& s : same) std::sort(s.begin(), s.end());
  return same;
}

std::vector<std::string> OneMachineNotes(const std::vector<std::string>& names,
                                         const std::vector<HostIdentity>& hosts) {
  std::vector<std::string> notes;
  for (size_t i = 0; i < hosts.size() && i < names.size(); ++i) {
    for (size_t j = i + 1; j < hosts.size() && j < names.size(); ++j) {
      if (OnOneHost(hosts[i], hosts[j])) {
        notes.push_back(names[i] + " and " + names[j] +
                        " are one machine (same machine-id and boot): their differences are not between devices");
      }
    }
  }
  return notes;
}

}  // namespace fleetmark::scheduler
