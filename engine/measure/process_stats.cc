#include "engine/measure/process_stats.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace fleetmark::engine {
namespace {

absl::Duration FromTimeval(const timeval& tv) { return absl::Seconds(tv.tv_sec) + absl::Microseconds(tv.tv_usec); }

absl::StatusOr<ResourceUsage> ReadUsage(int who, const char* name) {
  rusage ru;
  if (getrusage(who, &ru) != 0) {
    return absl::InternalError(absl::StrCat("getrusage(", name, "): ", std::strerror(errno)));
  }
  ResourceUsage usage;
  usage.user_cpu = FromTimeval(ru.ru_utime);
  usage.system_cpu = FromTimeval(ru.ru_stime);
  usage.voluntary_context_switches = ru.ru_nvcsw;
  usage.involuntary_context_switches = ru.ru_nivcsw;
  return usage;
}

// Reads a small /proc file into `buf` with one open + read; returns the bytes read
// or -1 with errno set. No allocation.
ssize_t ReadSmallFile(const char* path, char* buf, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, buf, size - 1);
  const int saved = errno;
  close(fd);
  errno = saved;
  if (n >= 0) buf[n] = '\0';
  return n;
}

}  // namespace

ResourceUsage operator+(const ResourceUsage& a, const ResourceUsage& b) {
  ResourceUsage d;
  d.user_cpu = a.user_cpu + b.user_cpu;
  d.system_cpu = a.system_cpu + b.system_cpu;
  d.voluntary_context_switches = a.voluntary_context_switches + b.voluntary_context_switches;
  d.involuntary_context_switches = a.involuntary_context_switches + b.involuntary_context_switches;
  return d;
}

ResourceUsage operator-(const ResourceUsage& a, const ResourceUsage& b) {
  ResourceUsage d;
  d.user_cpu = a.user_cpu - b.user_cpu;
  d.system_cpu = a.system_cpu - b.system_cpu;
  d.voluntary_context_switches = a.voluntary_context_switches - b.voluntary_context_switches;
  d.involuntary_context_switches = a.involuntary_context_switches - b.involuntary_context_switches;
  return d;
}

absl::StatusOr<ResourceUsage> ReadResourceUsage() { return ReadUsage(RUSAGE_SELF, "RUSAGE_SELF"); }

absl::StatusOr<ResourceUsage> ReadThreadResourceUsage() { return ReadUsage(RUSAGE_THREAD, "RUSAGE_THREAD"); }

absl::StatusOr<ProcessStatus> ReadProcessStatus() {
  constexpr char kPath[] = "/proc/self/status";
  std::ifstream in(kPath);
  if (!in) return absl::NotFoundError(absl::StrCat(kPath, ": cannot open"));
  ProcessStatus status;
  bool have_threads = false, have_rss = false, have_hwm = false;
  std::string line;
  // "VmRSS:\t  1234 kB", "Threads:\t5".
  auto parse = [&](absl::string_view key, absl::string_view text, uint64_t* out) {
    if (!absl::ConsumePrefix(&text, key)) return false;
    text = absl::StripAsciiWhitespace(text);
    const bool kib = absl::ConsumeSuffix(&text, "kB");
    text = absl::StripAsciiWhitespace(text);
    uint64_t value = 0;
    if (!absl::SimpleAtoi(text, &value)) return false;
    *out = kib ? value * 1024 : value;
    return true;
  };
  while (std::getline(in, line)) {
    uint64_t value = 0;
    if (parse("Threads:", line, &value)) {
      status.threads = static_cast<int64_t>(value);
      have_threads = true;
    } else if (parse("VmRSS:", line, &value)) {
      status.rss_bytes = value;
      have_rss = true;
    } else if (parse("VmHWM:", line, &value)) {
      status.peak_rss_bytes = value;
      have_hwm = true;
    }
  }
  if (!have_threads || !have_rss || !have_hwm) {
    return absl::InternalError(absl::StrCat(kPath, ": missing ", !have_threads ? "Threads " : "",
                                            !have_rss ? "VmRSS " : "", !have_hwm ? "VmHWM" : ""));
  }
  return status;
}

absl::StatusOr<uint64_t> ReadRssBytes() {
  constexpr char kPath[] = "/proc/self/statm";
  char buf[256];
  if (ReadSmallFile(kPath, buf, sizeof buf) < 0) {
    return absl::NotFoundError(absl::StrCat(kPath, ": ", std::strerror(errno)));
  }
  // "size resident shared text lib data dt" in pages.
  std::vector<absl::string_view> fields = absl::StrSplit(buf, absl::ByAnyChar(" \n"), absl::SkipWhitespace());
  uint64_t pages = 0;
  if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &pages)) {
    return absl::InternalError(absl::StrCat(kPath, ": unexpected content '", buf, "'"));
  }
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

absl::StatusOr<int64_t> ReadThreadCount() {
  constexpr char kPath[] = "/proc/self/stat";
  char buf[1024];
  if (ReadSmallFile(kPath, buf, sizeof buf) < 0) {
    return absl::NotFoundError(absl::StrCat(kPath, ": ", std::strerror(errno)));
  }
  char status[4096];
  status[0] = '\0';
  if (ParseStatThreadCount(buf) == 0) {
    // qemu-user fakes /proc/self/stat with num_threads 0; its /proc/self/status is the
    // kernel's (the emulator process: the guest's threads plus the emulator's own).
    (void)ReadSmallFile("/proc/self/status", status, sizeof status);
  }
  const int64_t threads = ThreadCountFromProc(buf, status);
  if (threads <= 0) {
    return absl::InternalError(absl::StrCat(kPath, ": no num_threads field (nor a Threads line in /proc/self/status)"));
  }
  return threads;
}

int64_t ThreadCountFromProc(const char* stat, const char* status) {
  const int64_t threads = ParseStatThreadCount(stat);
  return threads == 0 ? ParseStatusThreadCount(status) : threads;
}

// The decimal number that starts at `p` (no sign), or -1 when no digit is there.
static int64_t ParseDecimal(const char* p) {
  int64_t value = 0;
  bool any = false;
  while (*p >= '0' && *p <= '9') {
    value = value * 10 + (*p - '0');
    ++p;
    any = true;
  }
  return any ? value : -1;
}

int64_t ParseStatusThreadCount(const char* status) {
  const char* p = std::strstr(status, "\nThreads:");
  if (p == nullptr) return -1;
  p += std::strlen("\nThreads:");
  while (*p == ' ' || *p == '\t') ++p;
  return ParseDecimal(p);
}

int64_t ParseStatThreadCount(const char* stat) {
  // "pid (comm) state ppid ...": comm may contain spaces and ')' so fields are counted
  // from the last ')'. num_threads is field 20; after ')' come fields 3, 4, ...
  const char* p = std::strrchr(stat, ')');
  if (p == nullptr) return -1;
  ++p;
  for (int field = 3; field < 20; ++field) {
    while (*p == ' ') ++p;
    while (*p != ' ' && *p != '\0') ++p;
    if (*p == '\0') return -1;
  }
  while (*p == ' ') ++p;
  return ParseDecimal(p);
}

absl::Status ResetPeakRss() {
  constexpr char kPath[] = "/proc/self/clear_refs";
  const int fd = open(kPath, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string message =
        absl::StrCat(kPath, ": cannot open (", std::strerror(err), "); VmHWM stays the peak since process start");
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
    return absl::FailedPreconditionError(message);
  }
  const ssize_t n = write(fd, "5", 1);
  const int err = errno;
  close(fd);
  if (n != 1) {
    // Kernels before 4.0 reject "5" with EINVAL.
    return absl::FailedPreconditionError(absl::StrCat(kPath, ": writing \"5\" failed (", std::strerror(err),
                                                      "); VmHWM stays the peak since process start"));
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::engine
