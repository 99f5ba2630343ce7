// Agents on one host (issue 31, item 5): the one definition of "these two agents are one
// machine", used by the job claims (one job per host), `agents list`, the Fleet page and
// `compare`. An agent's host identity is what its hello says: the machine id
// (/etc/machine-id, systemd's machine-id(5)) and the kernel's boot id
// (/proc/sys/kernel/random/boot_id, random per boot). Either may be "" (Android, some
// containers): an agent without both is never on one host with another. Pure functions,
// thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fleetmark::scheduler {

struct HostIdentity {
  std::string_view machine_id;
  std::string_view boot_id;
  // The agent was started with --exclusive_cpus: pinned to CPUs no other agent of its
  // host uses, so it may run a job while another such agent does.
  bool exclusive_cpus = false;
};

// The form of a machine id or boot id in a hello: 1 to 64 of [0-9a-f-] (machine-id(5)
// is 32 lower-case hex digits, a boot id a UUID).
bool IsHostIdText(std::string_view text);

// Both machine ids and both boot ids non-empty and equal: the same running machine (a
// cloned image rebooted has the same machine id but another boot id, a reboot changes
// both agents' boot ids alike).
bool OnOneHost(const HostIdentity& a, const HostIdentity& b);

// Whether `a` and `b` must not run jobs at the same time: on one host, unless both were
// started with --exclusive_cpus (one of them alone does not keep the other off its CPUs).
bool TakeTurns(const HostIdentity& a, const HostIdentity& b);

// The host's short form for tables: the machine id's first 8 characters; "" when the
// identity is unknown (machine id or boot id empty).
std::string ShortHostId(const HostIdentity& host);

// For each of `hosts`, the indexes of the others on one host with it (OnOneHost),
// ascending (`agents list`, the Fleet page).
std::vector<std::vector<size_t>> SameHostAs(const std::vector<HostIdentity>& hosts);

// What `compare` says of its devices on one host: for each pair i < j of `hosts` on one
// host, "NAME_i and NAME_j are one machine (same machine-id and boot): their differences
// are not between devices". `names` is parallel to `hosts`.
std::vector<std::string> OneMachineNotes(const std::vector<std::string>& names, const std::vector<HostIdentity>& hosts);

}  // namespace fleetmark::scheduler
