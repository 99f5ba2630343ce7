#include "engine/topology/sysfs.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <iterator>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetmark::engine::topology_internal {
namespace {

constexpr std::size_t kMaxFileBytes = 1 << 20;

}  // namespace

SysfsReader::SysfsReader(std::string fsroot) : fsroot_(std::move(fsroot)) {
  while (fsroot_.size() > 1 && fsroot_.back() == '/') fsroot_.pop_back();
  if (fsroot_ == "/") fsroot_.clear();
}

std::string SysfsReader::Resolve(absl::string_view path) const { return absl::StrCat(fsroot_, path); }

std::optional<std::string> SysfsReader::Read(absl::string_view path) const {
  std::ifstream in(Resolve(path), std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (text.size() < kMaxFileBytes) {
    in.read(buffer, sizeof(buffer));
    if (in.gcount() <= 0) break;
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return std::nullopt;
  absl::StripTrailingAsciiWhitespace(&text);
  return text;
}

std::optional<uint64_t> SysfsReader::ReadUint(absl::string_view path) const {
  std::optional<std::string> text = Read(path);
  if (!text) return std::nullopt;
  absl::string_view s = absl::StripLeadingAsciiWhitespace(*text);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return value;
}

std::optional<int64_t> SysfsReader::ReadInt(absl::string_view path) const {
  std::optional<std::string> text = Read(path);
  if (!text) return std::nullopt;
  absl::string_view s = absl::StripLeadingAsciiWhitespace(*text);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return value;
}

std::vector<int> SysfsReader::ListNumbered(absl::string_view dir, absl::string_view prefix) const {
  std::vector<int> numbers;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(Resolve(dir).c_str()), &closedir);
  if (!d) return numbers;
  while (dirent* entry = readdir(d.get())) {
    absl::string_view name = entry->d_name;
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    absl::string_view digits = name.substr(prefix.size());
    int value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || value < 0) continue;
    numbers.push_back(value);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

std::vector<std::string> SysfsReader::ListEntries(absl::string_view dir) const {
  std::vector<std::string> names;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(Resolve(dir).c_str()), &closedir);
  if (!d) return names;
  while (dirent* entry = readdir(d.get())) {
    absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool SysfsReader::Exists(absl::string_view path) const {
  struct stat st;
  return stat(Resolve(path).c_str(), &st) == 0;
}

std::optional<uint64_t> ReadMeminfoField(const SysfsReader& reader, absl::string_view key) {
  const std::string meminfo = reader.Read("/proc/meminfo").value_or("");
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, ":")) continue;
    line = absl::StripAsciiWhitespace(line);
    absl::ConsumeSuffix(&line, "kB");
    uint64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kib)) return kib * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

CpuSet ReadSysfsOnlineCpus(const SysfsReader& reader) {
  constexpr absl::string_view kCpuDir = "/sys/devices/system/cpu";
  if (std::optional<std::string> online = reader.Read(absl::StrCat(kCpuDir, "/online"))) {
    absl::StatusOr<CpuSet> cpus = ParseCpuList(*online);
    if (cpus.ok() && !cpus->empty()) return *std::move(cpus);
  }
  CpuSet cpus;
  for (int cpu : reader.ListNumbered(kCpuDir, "cpu")) {
    if (cpu >= kMaxCpuId) continue;
    std::optional<uint64_t> online = reader.ReadUint(absl::StrCat(kCpuDir, "/cpu", cpu, "/online"));
    if (online.value_or(1) != 0) cpus.push_back(cpu);
  }
  return cpus;
}

CpuSet IntersectCpus(const CpuSet& a, const CpuSet& b) {
  CpuSet out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

absl::StatusOr<CpuSet> ParseCpuMask(absl::string_view text) {
  CpuSet cpus;
  int bit = 0;
  for (auto it = text.rbegin(); it != text.rend(); ++it) {
    char c = *it;
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) continue;
    int nibble;
    if (c >= '0' && c <= '9') {
      nibble = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      nibble = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      nibble = c - 'A' + 10;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("CPU mask: hexadecimal digits and commas expected, got \"", text, "\""));
    }
    for (int b = 0; b < 4; ++b, ++bit) {
      if ((nibble >> b) & 1 && bit < kMaxCpuId) cpus.push_back(bit);
    }
  }
  return cpus;
}

}  // namespace fleetmark::engine::topology_internal
