// ParseProcStat, OtherCpuShare, ContentionProbe (contention.h).
#include "engine/measure/contention.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace fleetmark::engine {
namespace {

double RusageSeconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// CPU time of this process and of its reaped children, s.
double OwnCpuSeconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return RusageSeconds(self) + RusageSeconds(children);
}

double TicksPerSecond() {
  const long hz = sysconf(_SC_CLK_TCK);
  return hz > 0 ? static_cast<double>(hz) : 100.0;
}

}  // namespace

absl::StatusOr<ProcStatTimes> ParseProcStat(std::string_view text) {
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.empty() || f[0] != "cpu") continue;
    if (f.size() < 5) return absl::InvalidArgumentError("/proc/stat: the cpu line has fewer than 4 fields");
    ProcStatTimes t;
    // user nice system idle iowait irq softirq steal [guest guest_nice: inside user/nice]
    for (size_t i = 1; i < f.size() && i <= 8; ++i) {
      uint64_t v = 0;
      if (!absl::SimpleAtoi(f[i], &v)) {
        return absl::InvalidArgumentError("/proc/stat: a cpu field is not a number");
      }
      t.total += v;
      if (i == 8) {
        t.steal = v;
      } else if (i != 4 && i != 5) {
        t.busy += v;
      }
    }
    return t;
  }
  return absl::InvalidArgumentError("/proc/stat: no aggregate cpu line");
}

std::optional<double> OtherCpuShare(const ProcStatTimes& before, const ProcStatTimes& after, double own_cpu_seconds,
                                    double ticks_per_second) {
  if (after.total < before.total || after.busy < before.busy || after.steal < before.steal) return std::nullopt;
  const uint64_t total = after.total - before.total;
  if (total < kMinWindowTicks) return std::nullopt;
  const double used = static_cast<double>(after.busy - before.busy) + static_cast<double>(after.steal - before.steal);
  const double own = std::max(0.0, own_cpu_seconds) * ticks_per_second;
  return std::clamp((used - own) / static_cast<double>(total), 0.0, 1.0);
}

absl::StatusOr<std::string> ReadProcStat() {
  std::ifstream in("/proc/stat");
  if (!in) return absl::UnavailableError("/proc/stat: cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ContentionProbe::ContentionProbe(ProcStatReader reader)
    : reader_(reader ? std::move(reader) : ProcStatReader(&ReadProcStat)) {
  own_before_seconds_ = OwnCpuSeconds();
  if (absl::StatusOr<std::string> text = reader_(); text.ok()) {
    if (absl::StatusOr<ProcStatTimes> t = ParseProcStat(*text); t.ok()) before_ = *t;
  }
}

std::optional<double> ContentionProbe::Finish() {
  const double own = OwnCpuSeconds() - own_before_seconds_;
  if (!before_) return std::nullopt;
  absl::StatusOr<std::string> text = reader_();
  if (!text.ok()) return std::nullopt;
  absl::StatusOr<ProcStatTimes> after = ParseProcStat(*text);
  if (!after.ok()) return std::nullopt;
  return OtherCpuShare(*before_, *after, own, TicksPerSecond());
}

}  // namespace fleetmark::engine
