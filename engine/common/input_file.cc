#include "engine/common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetmark {
namespace {

absl::Status OpenError(const std::string& path, int err, const InputFileRule& rule) {
  const std::string what = absl::StrCat(path, ": cannot open ", rule.noun, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(what);
  if (err == EACCES) return absl::PermissionDeniedError(what);
  return absl::InvalidArgumentError(what);
}

std::string FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

absl::Status TooLarge(const std::string& name, uint64_t bytes, const InputFileRule& rule) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", rule.noun, " is ", bytes, " bytes or more; at most ",
                                                 rule.max_bytes, " (", rule.max_text, ")"));
}

// Reads at most rule.max_bytes from `fd`; InvalidArgument if there is more.
absl::StatusOr<std::string> ReadCapped(int fd, const std::string& name, const InputFileRule& rule) {
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return text;
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InvalidArgumentError(absl::StrCat(name, ": cannot read ", rule.noun, ": ", std::strerror(errno)));
    }
    if (text.size() + static_cast<size_t>(n) > rule.max_bytes) {
      return TooLarge(name, text.size() + static_cast<size_t>(n), rule);
    }
    text.append(buffer, static_cast<size_t>(n));
  }
}

// Closes the descriptor it owns.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

absl::StatusOr<std::string> ReadInputFile(const std::string& path, const InputFileRule& rule) {
  if (path == kStdinPath) return ReadCapped(STDIN_FILENO, std::string(rule.stdin_name), rule);
  // O_NONBLOCK: opening a FIFO without a writer must not block; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return OpenError(path, errno, rule);
  FdCloser closer{fd};
  struct stat st = {};
  if (::fstat(fd, &st) != 0) return OpenError(path, errno, rule);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", FileKind(st.st_mode), "; ", rule.must_be));
  }
  if (static_cast<uint64_t>(st.st_size) > rule.max_bytes) return TooLarge(path, st.st_size, rule);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return ReadCapped(fd, path, rule);
}

}  // namespace fleetmark
