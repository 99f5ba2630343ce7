// BuildBracketPlan, AssumedText (recommend_plan.h).
#include "engine/report/recommend_plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "engine/plan/sweep.h"
#include "engine/report/strategy_map.h"
#include "engine/scenarios/param_rules.h"
#include "engine/strategies/registry.h"

namespace fleetmark::report {
namespace {

// The largest value of each parameter `--measure` brackets, in the parameter's unit,
// with the key a user most likely writes it in and that key's scale.
struct MeasuredRange {
  const char* param;
  double max;
  const char* key;
  double scale;
};
constexpr MeasuredRange kMeasuredRanges[] = {
    {"cpu_ns", 10e6, "cpu_us", 1e3},
    {"wait_us", 100e3, "wait_ms", 1e3},
    {"alloc_bytes", 64.0 * 1024 * 1024, "alloc_kib", 1024},
    {"touch_kib", 65536, "touch_mib", 1024},
};

constexpr char kMeasureWhy[] = "for --measure";

const MeasuredRange* RangeOf(const std::string& param) {
  for (const MeasuredRange& r : kMeasuredRanges) {
    if (param == r.param) return &r;
  }
  return nullptr;
}

uint32_t Rounded(double v) { return static_cast<uint32_t>(std::llround(v)); }

v1::StrategySpec Spec(std::string_view name, uint32_t threads) {
  v1::StrategySpec s;
  s.set_name(std::string(name));
  if (threads > 0) s.set_threads(threads);
  return s;
}

// The contenders of `io_mode` (the registry's traits decide; see the header).
std::vector<v1::StrategySpec> Contenders(const std::string& io_mode, bool waits,
                                         const std::vector<uint32_t>& io_threads) {
  std::vector<v1::StrategySpec> out;
  for (const engine::StrategyTraits& s : engine::kStrategies) {
    if (io_mode == "suspending") {
      if (s.suspending) out.push_back(Spec(s.name, 0));
      continue;
    }
    if (s.carrier == engine::Carrier::kCaller && !waits) out.push_back(Spec(s.name, 0));
    if (s.carrier == engine::Carrier::kPool && !s.ignores_threads) {
      out.push_back(Spec(s.name, 0));
      for (uint32_t t : io_threads) out.push_back(Spec(s.name, t));
    }
  }
  return out;
}

}  // namespace

ProfileLimits MeasureProfileLimits() {
  ProfileLimits limits{.why = kMeasureWhy};
  for (const MeasuredRange& r : kMeasuredRanges) limits.max.emplace_back(r.param, r.max);
  return limits;
}

absl::StatusOr<BracketPlan> BuildBracketPlan(const Profile& profile, const BracketOptions& options) {
  if (profile.params.empty()) return absl::InvalidArgumentError("--profile: give at least one parameter");
  if (options.tasks < 1 || options.tasks > kMaxBracketTasks) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tasks: 1 <= tasks <= ", kMaxBracketTasks, ", got ", options.tasks));
  }
  BracketPlan b;
  b.profile = profile;
  b.tasks = options.tasks;
  for (uint32_t t : options.io_threads) {
    if (t == 0) return absl::InvalidArgumentError("io thread counts: each >= 1, got 0");
    b.io_threads.push_back(std::min(t, options.tasks));
  }
  std::sort(b.io_threads.begin(), b.io_threads.end());
  b.io_threads.erase(std::unique(b.io_threads.begin(), b.io_threads.end()), b.io_threads.end());

  // Ranges, and the neighbours of each parameter.
  struct Axis {
    std::string param;
    uint32_t below, at, above;
  };
  std::vector<Axis> axes;
  v1::SyntheticParams center;
  double serial_ns = 0;  // one task at the upper neighbours, one after another
  for (size_t i = 0; i < profile.params.size(); ++i) {
    const auto& [param, value] = profile.params[i];
    const MeasuredRange* range = RangeOf(param);
    if (range == nullptr) return absl::InvalidArgumentError(absl::StrCat("--profile: unknown parameter ", param));
    if (value > range->max) {
      // Named as the user wrote it (cpu_us), with the parameter's own range beside it.
      const std::string key = i < profile.keys.size() ? profile.keys[i] : param;
      return absl::InvalidArgumentError(absl::StrCat("--profile: ", key, ": ",
                                                     ProfileRangeText(key, param, range->max, kMeasureWhy), ", got ",
                                                     FormatParamValue(value / ProfileKeyScale(key))));
    }
    const uint32_t at = Rounded(value);
    engine::SetSyntheticParam(center, param, at);
    const uint32_t max = engine::FindSyntheticRule(param)->max;
    const uint32_t below = at / 2, above = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{at} * 2, max));
    if (at > 0) axes.push_back({param, below, at, above});
    if (param == "cpu_ns") serial_ns += 2.0 * at;
    if (param == "wait_us") serial_ns += 2.0 * at * 1e3;
  }
  const bool waits = center.wait_us() > 0;
  if (options.tasks * serial_ns / 1e9 > kMaxBracketSerialSeconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tasks: ", options.tasks, " tasks of ", FormatProfile(profile), " take ",
                     FormatParamValue(std::round(options.tasks * serial_ns / 1e9)),
                     " s per batch one after another at twice the profile; --measure measures at most ",
                     FormatParamValue(kMaxBracketSerialSeconds), " s: give fewer --tasks or a smaller profile"));
  }

  // Points: the profile, then each axis's neighbours.
  auto params_at = [&](const std::string& moved, uint32_t value) {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& [param, v] : profile.params) out.emplace_back(param, param == moved ? value : Rounded(v));
    return out;
  };
  b.points.push_back({"profile", params_at("", 0)});
  for (const Axis& a : axes) {
    if (a.below != a.at) b.points.push_back({absl::StrCat(a.param, " x0.5"), params_at(a.param, a.below)});
    if (a.above != a.at) b.points.push_back({absl::StrCat(a.param, " x2"), params_at(a.param, a.above)});
  }

  b.io_modes = {"blocking"};
  if (waits) b.io_modes.push_back("suspending");
  v1::Plan& plan = b.plan;
  plan.set_name("recommend");
  plan.set_description(absl::StrCat(
      "fleetmark recommend --profile '", absl::StrReplaceAll(FormatProfile(profile), {{", ", ","}}), "' --tasks ",
      options.tasks, ": the profile and its neighbours x0.5 and x2, ", absl::StrJoin(b.io_modes, " and "), " waits"));
  for (const std::string& io_mode : b.io_modes) {
    const std::vector<v1::StrategySpec> contenders = Contenders(io_mode, waits, b.io_threads);
    auto add_matrix = [&](const Axis* axis, bool with_center) {
      v1::Matrix& m = *plan.add_matrix();
      for (const v1::StrategySpec& s : contenders) *m.add_strategies() = s;
      m.add_workloads(engine::kSyntheticWorkload);
      m.add_io_modes(io_mode);
      m.mutable_batch()->set_tasks(options.tasks);
      *m.mutable_synthetic() = center;
      if (axis == nullptr) return;
      v1::Sweep& sweep = *m.add_sweeps();
      sweep.set_param(axis->param);
      if (axis->below != axis->at) sweep.add_values(axis->below);
      if (with_center) sweep.add_values(axis->at);
      if (axis->above != axis->at) sweep.add_values(axis->above);
    };
    if (axes.empty()) add_matrix(nullptr, true);
    for (size_t i = 0; i < axes.size(); ++i) {
      const bool first = i == 0;
      // A further axis with neither neighbour (cannot happen for a value > 0) adds nothing.
      if (!first && axes[i].below == axes[i].at && axes[i].above == axes[i].at) continue;
      add_matrix(&axes[i], first);
    }
  }
  // Default mode: 3 processes, a 2% target; quick (what --measure runs): a short
  // warm-up and budget per case, still 3 processes.
  v1::MeasurementSettings& m = *plan.mutable_measurement();
  m.set_warmup_seconds(0.2);
  m.set_target_ci_percent(2);
  m.set_min_repetitions(10);
  m.set_max_repetitions(1000);
  m.set_max_seconds_per_case(5);
  m.set_processes(3);
  v1::MeasurementSettings& q = *plan.mutable_quick();
  q.set_warmup_seconds(0.05);
  q.set_min_repetitions(6);
  q.set_max_seconds_per_case(0.6);
  q.set_processes(3);
  return b;
}

std::string AssumedText(const BracketPlan& b) {
  std::vector<std::string> threads;
  for (uint32_t t : b.io_threads) threads.push_back(absl::StrCat(t));
  return absl::StrCat(b.tasks, " tasks per batch; thread counts tried ", absl::StrJoin(threads, ", "),
                      " and one per CPU; neighbours x0.5 and x2 of each given parameter");
}

}  // namespace fleetmark::report
