#include "engine/common/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fleetmark {
namespace {

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

absl::Status CheckSecretText(std::string_view named_view, std::string_view secret, std::string_view holds_view) {
  const std::string named(named_view), holds(holds_view);
  if (secret.empty()) return absl::InvalidArgumentError(absl::StrCat(named, " is empty; it must hold ", holds));
  if (secret.size() > kMaxSecretBytes) {
    return absl::InvalidArgumentError(absl::StrCat(named, " holds ", secret.size(), " bytes; a token is at most ",
                                                   kMaxSecretBytes, " bytes of visible ASCII"));
  }
  for (size_t i = 0; i < secret.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(secret[i]);
    if (c < 0x21 || c > 0x7e) {
      return absl::InvalidArgumentError(absl::StrCat(named, " holds byte 0x", absl::Hex(c, absl::kZeroPad2),
                                                     " at offset ", i,
                                                     "; a token is visible ASCII (0x21..0x7e, no spaces)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadSecretFile(std::string_view what, const std::string& path,
                                           std::string_view holds_view) {
  const std::string named = absl::StrCat(std::string(what), ": \"", path, "\""), holds(holds_view);
  auto cannot_read = [&](int error) -> absl::Status {
    const std::string message = absl::StrCat(named, ": cannot read: ", std::strerror(error));
    if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError(message);
    if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
    return absl::InvalidArgumentError(message);
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return cannot_read(errno);
  struct stat st = {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool directory = S_ISDIR(st.st_mode);
    const char* kind = FileKind(st.st_mode);
    ::close(fd);
    if (directory) {
      return absl::InvalidArgumentError(
          absl::StrCat(named, " is a directory, not a regular file (a directory); give the file holding ", holds));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(named, " is not a regular file (", kind, "); give the file holding ", holds));
  }
  // Enough to tell the size of any plausible mistake; more is not read.
  constexpr size_t kReadCap = 1 << 16;
  std::string text;
  char buffer[4096];
  while (text.size() <= kReadCap) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return cannot_read(error);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  const std::string secret(absl::StripAsciiWhitespace(text));
  if (text.size() > kReadCap) {
    return absl::InvalidArgumentError(
        absl::StrCat(named, " holds more than ", kReadCap, " bytes; a token is at most ", kMaxSecretBytes, " bytes"));
  }
  // What the bytes may be depends on where the token goes (CheckSecretText for a
  // header value; the agent's hello has its own text rules): only presence and size here.
  if (secret.empty()) return absl::InvalidArgumentError(absl::StrCat(named, " is empty; it must hold ", holds));
  if (secret.size() > kMaxSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(named, " holds ", secret.size(), " bytes; a token is at most ", kMaxSecretBytes, " bytes"));
  }
  return secret;
}

}  // namespace fleetmark
