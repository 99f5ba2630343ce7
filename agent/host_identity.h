// Which machine the agent runs on, for the coordinator's same-host rule
// (coordinator/scheduler/same_host.h): the machine id and the boot id, sent in every
// hello (Hello.machine_id, boot_id).
//
//   HostIdentityFiles files;  // the system's paths; tests pass fixture files
//   HostIds ids = ReadHostIds(files);
#pragma once

#include <string>
#include <vector>

namespace fleetmark::agent {

struct HostIdentityFiles {
  // Tried in order; the first readable one with a valid id wins (machine-id(5): systemd's
  // file, then D-Bus's older copy).
  std::vector<std::string> machine_id = {"/etc/machine-id", "/var/lib/dbus/machine-id"};
  std::string boot_id = "/proc/sys/kernel/random/boot_id";
};

struct HostIds {
  std::string machine_id;  // "" = unknown
  std::string boot_id;     // "" = unknown
};

// Each id: the file's first line, trimmed and lower-cased, kept when it has the form
// same_host.h's IsHostIdText admits (1-64 of [0-9a-f-]); "" when no file is readable or
// none has that form (Android, containers without them). Never fails. Reads files;
// thread-compatible.
HostIds ReadHostIds(const HostIdentityFiles& files);

}  // namespace fleetmark::agent
