#include "agent/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fleetmark::agent {

absl::Status ErrnoStatus(int errno_value, absl::string_view what, absl::string_view path) {
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(errno_value));
  switch (errno_value) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open directory", dir);
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(saved, "fsync directory", dir);
  return absl::OkStatus();
}

absl::Status ReplaceFileAtomically(const std::string& dir, absl::string_view name, absl::string_view data,
                                   unsigned mode) {
  const std::string path = absl::StrCat(dir, "/", name);
  const std::string tmp = absl::StrCat(path, ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoStatus(errno, "create", tmp);
  absl::Status status = WriteAll(fd, data, tmp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoStatus(errno, "fsync", tmp);
  ::close(fd);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, "rename to " + path, tmp);
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  return SyncDirectory(dir);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      return ErrnoStatus(saved, "read", path);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
    }
  }
  ::close(fd);
  return out;
}

absl::Status MakeDirectories(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("directory path is empty");
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "mkdir", prefix);
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", dir);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(dir, ": not a directory"));
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::agent
