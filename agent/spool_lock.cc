#include "agent/spool_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "engine/common/status_macros.h"

namespace fleetmark::agent {

pid_t SpoolLockHolder(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path, 64);
  int pid = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &pid) || pid <= 0) {
    return 0;
  }
  return pid;
}

absl::StatusOr<std::unique_ptr<SpoolLock>> SpoolLock::Acquire(const std::string& dir) {
  const std::string path = dir + "/lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    ::close(fd);
    if (error != EWOULDBLOCK) return ErrnoStatus(error, "flock", path);
    // The holder may not have written its pid yet (it writes right after locking).
    const pid_t holder = SpoolLockHolder(path);
    return absl::FailedPreconditionError(absl::StrCat("spool dir ", dir, " is in use by another fleetmark-agent (pid ",
                                                      holder > 0 ? absl::StrCat(holder) : std::string("unknown"),
                                                      "); give each agent its own --spool_dir"));
  }
  std::unique_ptr<SpoolLock> lock(new SpoolLock(fd, path));
  if (::ftruncate(fd, 0) != 0) return ErrnoStatus(errno, "truncate", path);
  FLEETMARK_RETURN_IF_ERROR(WriteAll(fd, absl::StrCat(::getpid(), "\n"), path));
  return lock;
}

SpoolLock::~SpoolLock() { ::close(fd_); }

}  // namespace fleetmark::agent
