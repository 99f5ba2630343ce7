#include "coordinator/cli/result_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fleetmark::cli {
namespace {

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

}  // namespace

absl::StatusOr<ResultOutput> ResultOutput::Open(const std::string& out,
                                                const std::string& plan_path) {
  ResultOutput output;
  if (out.empty()) {
    output.fd_ = STDOUT_FILENO;
    return output;
  }
  output.name_ = out;
  output.path_ = out;
  std::error_code ec;
  if (std::filesystem::equivalent(out, plan_path, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out: ", out, " is the plan file; write the results elsewhere"));
  }
  if (std::filesystem::is_directory(out, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--out: ", out, ": is a directory"));
  }
  const std::filesystem::path target(out);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  const std::string temp =
      (dir / absl::StrCat(".", target.filename().string(), ".XXXXXX")).string();
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out: cannot write ", out, ": ", std::strerror(errno)));
  }
  // mkstemp creates 0600; results are ordinary files (0644 less the umask).
  const mode_t umask_bits = ::umask(0);
  ::umask(umask_bits);
  ::fchmod(fd, 0644 & ~umask_bits);
  output.fd_ = fd;
  output.temp_path_ = name.data();
  return output;
}

ResultOutput::ResultOutput(ResultOutput&& other) noexcept
    : name_(std::move(other.name_)),
      path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(other.fd_) {
  other.fd_ = -1;
  other.temp_path_.clear();
}

ResultOutput::~ResultOutput() {
  if (!temp_path_.empty()) {
    ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
}

absl::Status ResultOutput::WriteAll(const std::string& text) {
  if (path_.empty()) return WriteFd(fd_, text, name_);
  absl::Status status = WriteFd(fd_, text, name_);
  if (status.ok() && ::fsync(fd_) != 0) {
    status = absl::InternalError(absl::StrCat("writing results to ", name_, " failed: ", std::strerror(errno)));
  }
  if (::close(fd_) != 0 && status.ok()) {
    status = absl::InternalError(absl::StrCat("writing results to ", name_, " failed: ", std::strerror(errno)));
  }
  fd_ = -1;
  if (status.ok() && ::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    status = absl::InternalError(
        absl::StrCat("--out: cannot replace ", name_, ": ", std::strerror(errno)));
  }
  if (status.ok()) {
    temp_path_.clear();
  } else {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
  return status;
}

}  // namespace fleetmark::cli
