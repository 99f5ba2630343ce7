#include "agent/host_identity.h"

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "agent/file_util.h"
#include "coordinator/scheduler/same_host.h"

namespace fleetmark::agent {
namespace {

// The id in `path`, or "" (missing, unreadable, empty, not an id).
std::string ReadId(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, 4096);
  if (!text.ok()) return "";
  absl::string_view line = *text;
  line = line.substr(0, line.find('\n'));
  std::string id = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line));
  return scheduler::IsHostIdText(id) ? id : "";
}

}  // namespace

HostIds ReadHostIds(const HostIdentityFiles& files) {
  HostIds ids;
  for (const std::string& path : files.machine_id) {
    ids.machine_id = ReadId(path);
    if (!ids.machine_id.empty()) break;
  }
  ids.boot_id = ReadId(files.boot_id);
  return ids;
}

}  // namespace fleetmark::agent
