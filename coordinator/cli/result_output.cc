#include "coordinator/cli/result_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/common/text.h"

namespace fleetmark::cli {
namespace {

// Symbolic links followed before --out is called a loop (Linux's own limit is 40).
constexpr int kMaxSymlinkHops = 40;

absl::Status WriteFd(int fd, const std::string& text, const std::string& name) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(
          absl::StrCat("writing results to ", name, " failed: ", std::strerror(n < 0 ? errno : EIO)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteFailed(const std::string& name) {
  return absl::InternalError(absl::StrCat("writing results to ", name, " failed: ", std::strerror(errno)));
}

// The descriptor of this process that `path` names (/dev/stdout, /dev/fd/3,
// /proc/self/fd/3), or -1. Such a path is written through its descriptor: resolving it
// would reach a pipe, a socket or the file behind a shell redirection.
int DescriptorOf(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    int fd = -1;
    if (absl::StartsWith(path, prefix) && absl::SimpleAtoi(path.substr(std::strlen(prefix)), &fd) && fd >= 0) {
      return fd;
    }
  }
  return -1;
}

// What --out finally names, after following symbolic links.
struct Target {
  enum class Kind {
    kReplace,     // a regular file (`exists`) or a new name: temporary file + rename
    kInPlace,     // a device, FIFO, socket, terminal: opened and written through
    kDescriptor,  // a descriptor of this process
  };
  Kind kind = Kind::kReplace;
  std::string path;
  bool exists = false;
  mode_t mode = 0;    // kReplace of an existing file: its permission bits
  bool fifo = false;  // kInPlace
  int fd = -1;        // kDescriptor
};

// Follows `out` through symbolic links (each relative target resolved against its
// link's directory). InvalidArgument for a dangling link, a loop or a directory.
absl::StatusOr<Target> Resolve(const std::string& out) {
  std::filesystem::path path(out);
  for (int hops = 0;; ++hops) {
    Target target;
    target.path = path.string();
    if (const int fd = DescriptorOf(target.path); fd >= 0) {
      target.kind = Target::Kind::kDescriptor;
      target.fd = fd;
      return target;
    }
    struct stat st;
    if (::lstat(target.path.c_str(), &st) != 0) {
      if (errno == ELOOP) break;
      if (errno == ENOENT && hops > 0) {
        return absl::InvalidArgumentError(absl::StrCat("--out: ", out, " is a symbolic link to ", target.path,
                                                       ", which does not exist (a dangling link: fix or remove it)"));
      }
      // A new file (or a missing directory, which creating the temporary file reports).
      if (errno == ENOENT) return target;
      return absl::InvalidArgumentError(absl::StrCat("--out: cannot write ", out, ": ", std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops == kMaxSymlinkHops) break;
      std::vector<char> buffer(PATH_MAX + 1);
      const ssize_t n = ::readlink(target.path.c_str(), buffer.data(), buffer.size() - 1);
      if (n < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--out: cannot write ", out, ": ", std::strerror(errno)));
      }
      const std::filesystem::path link_target(std::string(buffer.data(), static_cast<size_t>(n)));
      path = link_target.is_absolute() ? link_target : path.parent_path() / link_target;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("--out: ", out, ": is a directory"));
    }
    if (S_ISREG(st.st_mode)) {
      target.exists = true;
      target.mode = st.st_mode & 0777;
    } else {
      target.kind = Target::Kind::kInPlace;
      target.fifo = S_ISFIFO(st.st_mode);
    }
    return target;
  }
  return absl::InvalidArgumentError(absl::StrCat("--out: ", out, ": too many levels of symbolic links (a link loop?)"));
}

}  // namespace

absl::StatusOr<ResultOutput> ResultOutput::Open(const std::string& out, const std::string& plan_path) {
  ResultOutput output;
  if (out.empty()) {
    output.fd_ = STDOUT_FILENO;
    return output;
  }
  output.name_ = out;
  std::error_code ec;
  if (!plan_path.empty() && std::filesystem::equivalent(out, plan_path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--out: ", out, " is the plan file; write the results elsewhere"));
  }
  absl::StatusOr<Target> target = Resolve(out);
  if (!target.ok()) return target.status();
  switch (target->kind) {
    case Target::Kind::kDescriptor: {
      const int fd = ::fcntl(target->fd, F_DUPFD_CLOEXEC, 3);
      if (fd < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--out: cannot write ", out, ": descriptor ", target->fd, ": ", std::strerror(errno)));
      }
      output.fd_ = fd;
      output.owns_fd_ = true;
      return output;
    }
    case Target::Kind::kInPlace: {
      // Non-blocking first, so a FIFO without a reader is noticed and said (ENXIO).
      constexpr int kFlags = O_WRONLY | O_NOCTTY | O_CLOEXEC;
      int fd = ::open(target->path.c_str(), kFlags | O_NONBLOCK);
      if (fd < 0 && errno == ENXIO && target->fifo) {
        std::cerr << "fleetmark: --out " << out << " is a FIFO with no reader yet; waiting for one\n";
        fd = ::open(target->path.c_str(), kFlags);
      } else if (fd >= 0) {
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      }
      if (fd < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--out: cannot write ", out, ": ", std::strerror(errno)));
      }
      output.fd_ = fd;
      output.owns_fd_ = true;
      return output;
    }
    case Target::Kind::kReplace:
      break;
  }
  const std::filesystem::path path(target->path);
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const std::string temp = (dir / absl::StrCat(".", path.filename().string(), ".XXXXXX")).string();
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--out: cannot write ", out, ": ", std::strerror(errno)));
  }
  // mkstemp creates 0600; a replaced file keeps its bits, a new one is an ordinary file
  // (0644 less the umask).
  mode_t mode = target->mode;
  if (!target->exists) {
    const mode_t umask_bits = ::umask(0);
    ::umask(umask_bits);
    mode = 0644 & ~umask_bits;
  }
  ::fchmod(fd, mode);
  output.fd_ = fd;
  output.owns_fd_ = true;
  output.path_ = target->path;
  output.temp_path_ = name.data();
  return output;
}

ResultOutput::ResultOutput(ResultOutput&& other) noexcept
    : name_(std::move(other.name_)),
      path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(other.fd_),
      owns_fd_(other.owns_fd_) {
  other.fd_ = -1;
  other.owns_fd_ = false;
  other.temp_path_.clear();
}

ResultOutput::~ResultOutput() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

absl::Status ResultOutput::WriteAll(const std::string& text) {
  absl::Status status = WriteFd(fd_, text, name_);
  if (status.ok() && !temp_path_.empty() && ::fsync(fd_) != 0) status = WriteFailed(name_);
  if (owns_fd_) {
    // close() reports deferred write errors (NFS, some devices).
    if (::close(fd_) != 0 && status.ok()) status = WriteFailed(name_);
    fd_ = -1;
    owns_fd_ = false;
  }
  if (temp_path_.empty()) return status;  // written in place
  if (!status.ok()) {                     // an incomplete file: nothing in it to keep
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
    return status;
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    // The results are complete and on disk: keep them where they are and say where.
    status = absl::InternalError(absl::StrCat("--out: cannot replace ", name_, ": ", std::strerror(errno),
                                              "; the complete results are kept in ", temp_path_));
  }
  temp_path_.clear();
  return status;
}

std::string WroteResultsLine(int results, const std::string& out) {
  return absl::StrCat("wrote ", results, results == 1 ? " result" : " results", " to ", EscapeForTerminal(out));
}

}  // namespace fleetmark::cli
