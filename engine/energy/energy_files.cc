#include "engine/energy/energy_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/topology/sysfs.h"

namespace fleetmark::engine::energy {
namespace {

constexpr std::size_t kMaxFileBytes = 64 * 1024;

absl::Status ReadError(int error, absl::string_view path) {
  const std::string message = absl::StrCat(path, ": ", std::strerror(error));
  if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

class SysfsFiles : public EnergyFiles {
 public:
  explicit SysfsFiles(std::string fsroot) : reader_(std::move(fsroot)) {}

  absl::StatusOr<std::string> Read(absl::string_view path) const override {
    const std::string resolved = reader_.Resolve(path);
    int fd = -1;
    do {
      fd = ::open(resolved.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return ReadError(errno, path);
    std::string text;
    char buffer[4096];
    int error = 0;
    while (text.size() < kMaxFileBytes) {
      const ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error = errno;
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    if (error != 0) return ReadError(error, path);
    if (text.size() > kMaxFileBytes) text.resize(kMaxFileBytes);
    absl::StripTrailingAsciiWhitespace(&text);
    return text;
  }

  std::vector<std::string> List(absl::string_view dir) const override { return reader_.ListEntries(dir); }

 private:
  topology_internal::SysfsReader reader_;
};

}  // namespace

std::unique_ptr<EnergyFiles> SysfsEnergyFiles(std::string fsroot) {
  return std::make_unique<SysfsFiles>(std::move(fsroot));
}

}  // namespace fleetmark::engine::energy
