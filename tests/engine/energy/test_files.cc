#include "tests/engine/energy/test_files.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/energy/energy_sampler.h"

namespace fleetmark::engine::energy::test_support {

std::string TreeDir(absl::string_view tree) { return absl::StrCat(FLEETMARK_ENERGY_TREES, "/", tree); }

TreeFiles::TreeFiles(absl::string_view tree) : base_(SysfsEnergyFiles(TreeDir(tree))) {
  // DENIED sits next to sys/: read it through a seam rooted there.
  absl::StatusOr<std::string> denied = base_->Read("/DENIED");
  if (!denied.ok()) return;
  for (absl::string_view line : absl::StrSplit(*denied, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line.front() == '/') denied_.emplace(line);
  }
}

void TreeFiles::Overlay(absl::string_view overlay) { overlay_ = SysfsEnergyFiles(TreeDir(overlay)); }

absl::StatusOr<std::string> TreeFiles::Read(absl::string_view path) const {
  if (denied_.count(std::string(path)) > 0)
    return absl::PermissionDeniedError(absl::StrCat(path, ": Permission denied"));
  if (overlay_ != nullptr) {
    absl::StatusOr<std::string> later = overlay_->Read(path);
    if (!absl::IsNotFound(later.status())) return later;
  }
  return base_->Read(path);
}

std::vector<std::string> TreeFiles::List(absl::string_view dir) const { return base_->List(dir); }

absl::StatusOr<std::string> FakeFiles::Read(absl::string_view path) const {
  if (denied_.count(std::string(path)) > 0)
    return absl::PermissionDeniedError(absl::StrCat(path, ": Permission denied"));
  auto it = files_.find(std::string(path));
  if (it == files_.end()) return absl::NotFoundError(absl::StrCat(path, ": No such file or directory"));
  return std::string(absl::StripTrailingAsciiWhitespace(it->second));
}

std::vector<std::string> FakeFiles::List(absl::string_view dir) const {
  const std::string prefix = absl::StrCat(dir, "/");
  std::set<std::string> names;
  for (const auto& [path, text] : files_) {
    if (!absl::StartsWith(path, prefix)) continue;
    const absl::string_view rest = absl::string_view(path).substr(prefix.size());
    names.emplace(rest.substr(0, rest.find('/')));
  }
  return {names.begin(), names.end()};
}

namespace {
constexpr char kPoweredZone[] = "/sys/class/powercap/intel-rapl:0";
}  // namespace

PoweredRaplFiles::PoweredRaplFiles(double watts, uint64_t range_uj)
    : range_uj_(range_uj), last_s_(MonotonicSeconds()), watts_(watts) {
  fixed_.Set(absl::StrCat(kPoweredZone, "/name"), "package-0");
  fixed_.Set(absl::StrCat(kPoweredZone, "/max_energy_range_uj"), absl::StrCat(range_uj));
  fixed_.Set(absl::StrCat(kPoweredZone, "/energy_uj"), "0");
}

void PoweredRaplFiles::SetWatts(double watts) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = MonotonicSeconds();
  joules_ += watts_ * (now - last_s_);
  last_s_ = now;
  watts_ = watts;
}

absl::StatusOr<std::string> PoweredRaplFiles::Read(absl::string_view path) const {
  if (path != absl::StrCat(kPoweredZone, "/energy_uj")) return fixed_.Read(path);
  std::lock_guard<std::mutex> lock(mu_);
  const double now = MonotonicSeconds();
  joules_ += watts_ * (now - last_s_);
  last_s_ = now;
  return absl::StrCat(static_cast<uint64_t>(std::floor(joules_ * 1e6)) % range_uj_);
}

}  // namespace fleetmark::engine::energy::test_support
