// Per-process figures read from /proc for the benchmarks' reports (Linux only):
// resident memory and CPU time of one process, and of every PostgreSQL process.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetmark::bench {

// /proc/<pid>/status VmRSS in bytes (0 if unreadable).
inline uint64_t RssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
      uint64_t kib = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) return kib * 1024;
    }
  }
  return 0;
}

// The fields of /proc/<pid>/stat after "pid (comm) " (index 0 = field 3, the state),
// and the comm; false if the process is gone.
inline bool ReadStat(pid_t pid, std::string* comm, std::vector<std::string>* fields) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 > text.size()) return false;
  *comm = text.substr(open + 1, close - open - 1);
  *fields = absl::StrSplit(text.substr(close + 2), ' ');
  return fields->size() >= 15;
}

// Clock ticks of fields[index] + fields[index + 1], in seconds (0 if unparsable).
inline double TickPairSeconds(const std::vector<std::string>& fields, size_t index) {
  uint64_t a = 0, b = 0;
  if (fields.size() <= index + 1 || !absl::SimpleAtoi(fields[index], &a) || !absl::SimpleAtoi(fields[index + 1], &b)) {
    return 0;
  }
  return static_cast<double>(a + b) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// utime + stime of /proc/<pid>/stat (fields 14, 15), seconds; 0 if the process is gone.
inline double CpuSeconds(pid_t pid) {
  std::string comm;
  std::vector<std::string> fields;
  return ReadStat(pid, &comm, &fields) ? TickPairSeconds(fields, 11) : 0;
}

// CPU seconds of every process named "postgres" on this machine: the live ones'
// utime + stime, plus each postmaster's cutime + cstime (fields 16, 17: its backends
// that already exited, e.g. psql's). Only differences between two readings mean
// anything; run nothing else on PostgreSQL meanwhile (every cluster here is counted).
inline double PostgresCpuSeconds() {
  double total = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    std::string comm;
    std::vector<std::string> fields;
    if (!ReadStat(pid, &comm, &fields) || comm != "postgres") continue;
    total += TickPairSeconds(fields, 11);
    // A postmaster's parent is not a postgres process.
    pid_t parent = 0;
    std::string parent_comm;
    std::vector<std::string> parent_fields;
    if (absl::SimpleAtoi(fields[1], &parent) &&
        !(ReadStat(parent, &parent_comm, &parent_fields) && parent_comm == "postgres")) {
      total += TickPairSeconds(fields, 13);
    }
  }
  return total;
}

}  // namespace fleetmark::bench
