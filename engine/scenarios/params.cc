#include "engine/scenarios/params.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/registry.h"

namespace fleetmark::engine {
namespace {

// "field: lo <= name <= hi, got v" (docs/architecture.md, "Errors").
absl::Status CheckRange(const std::string& field, uint64_t value, uint64_t lo, uint64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  std::string name = field.substr(field.rfind('.') + 1);
  if (const size_t bracket = name.find('['); bracket != std::string::npos) {
    name = name.substr(0, bracket);
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", lo, " <= ", name, " <= ", hi, ", got ", value));
}

// The value, or `fallback` when the proto field holds its "use the default" zero.
uint32_t OrDefault(uint32_t value, uint32_t fallback) { return value == 0 ? fallback : value; }

// The first of `rules` (param_rules.h) that `params` breaks, as "<prefix>.<field>: ...".
template <typename Params, size_t N>
absl::Status CheckRules(std::string_view prefix, const ParamRule<Params> (&rules)[N], const Params& params) {
  if (auto broken = FirstBrokenRule(rules, params, RuleForm::kResolved)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(prefix), ".", broken->field, ": ", broken->detail));
  }
  return absl::OkStatus();
}

absl::Status CheckStrategy(const v1::StrategySpec& strategy) {
  FLEETMARK_RETURN_IF_ERROR(CheckRange("strategy.threads", strategy.threads(), 0, kMaxThreads));
  if (strategy.stack_kib() > static_cast<uint32_t>(kMaxStackKib)) {
    return CheckRange("strategy.stack_kib", strategy.stack_kib(), kMinStackKib, kMaxStackKib);
  }
  return ValidateStackKib(static_cast<int>(strategy.stack_kib()), "strategy.stack_kib");
}

}  // namespace

absl::StatusOr<MemoryConfig> ResolveMemoryConfig(const v1::CaseSpec& spec) {
  FLEETMARK_RETURN_IF_ERROR(CheckStrategy(spec.strategy()));
  const v1::MemoryParams& p = spec.memory();
  MemoryConfig config;
  if (p.task_counts().empty()) {
    config.task_counts = {1, 10, 100, 1000, 10000};
  } else {
    FLEETMARK_RETURN_IF_ERROR(CheckRange("memory.task_counts", p.task_counts_size(), 1, kMaxMemoryPoints));
    for (int i = 0; i < p.task_counts_size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(
          CheckRange(absl::StrCat("memory.task_counts[", i, "]"), p.task_counts(i), 1, kMaxMemoryTasks));
      config.task_counts.push_back(p.task_counts(i));
    }
  }
  config.stack_kib = spec.strategy().stack_kib();
  FLEETMARK_RETURN_IF_ERROR(CheckRules("memory", kMemoryRules, p));
  if (config.stack_kib != 0 && p.touch_stack_kib() + 8 > config.stack_kib) {
    // 8 KiB stay free for the task's own frames and the guard page's neighbourhood.
    return absl::InvalidArgumentError(
        absl::StrCat("memory.touch_stack_kib: 0 <= touch_stack_kib <= strategy.stack_kib - 8 = ", config.stack_kib - 8,
                     ", got ", p.touch_stack_kib()));
  }
  config.touch_stack_kib = p.touch_stack_kib();
  config.max_memory_bytes = uint64_t{RuleValue(kMemoryRules[1], p)} << 20;
  config.point_timeout = absl::Seconds(RuleValue(kMemoryRules[2], p));
  config.threads = static_cast<int>(spec.strategy().threads());
  return config;
}

absl::StatusOr<FanoutConfig> ResolveFanoutConfig(const v1::CaseSpec& spec) {
  FLEETMARK_RETURN_IF_ERROR(CheckStrategy(spec.strategy()));
  const v1::FanoutParams& p = spec.fanout();
  FanoutConfig config;
  FLEETMARK_RETURN_IF_ERROR(CheckRules("fanout", kFanoutRules, p));
  config.requests = RuleValue(kFanoutRequests, p);
  config.calls = RuleValue(kFanoutCalls, p);
  const uint64_t total = uint64_t{config.requests} * config.calls;
  if (total > kMaxFanoutTotalCalls) {
    return absl::InvalidArgumentError(absl::StrCat("fanout.requests * fanout.calls_per_request: at most ",
                                                   kMaxFanoutTotalCalls, " calls, got ", total));
  }
  config.delay = absl::Milliseconds(RuleValue(kFanoutDelay, p));
  config.timeout = absl::Milliseconds(RuleValue(kFanoutTimeout, p));
  config.random_delay = p.random_delay();
  config.seed = p.seed();
  config.threads = static_cast<int>(spec.strategy().threads());
  config.stack_kib = spec.strategy().stack_kib();
  return config;
}

absl::StatusOr<LoadConfig> ResolveLoadConfig(const v1::CaseSpec& spec) {
  FLEETMARK_RETURN_IF_ERROR(CheckStrategy(spec.strategy()));
  const v1::LoadParams& p = spec.load();
  LoadConfig config;
  FLEETMARK_RETURN_IF_ERROR(CheckRules("load", kLoadRules, p));
  config.users = RuleValue(kLoadUsers, p);
  config.objects = RuleValue(kLoadObjects, p);
  config.ramp = absl::Seconds(RuleValue(kLoadRamp, p));
  config.hold = absl::Seconds(RuleValue(kLoadHold, p));
  config.think = absl::Milliseconds(RuleValue(kLoadThink, p));
  config.db_wait = absl::Microseconds(RuleValue(kLoadDbWait, p));
  config.request_timeout = absl::Milliseconds(RuleValue(kLoadRequestTimeout, p));
  config.client_threads = static_cast<int>(RuleValue(kLoadClientThreads, p));
  // Threads 0: S3's pool of kDefaultPoolServerThreads for a pool server, else the CPUs.
  const StrategyTraits* strategy = FindStrategy(spec.strategy().name());
  const bool pool = strategy != nullptr && strategy->carrier == Carrier::kPool;
  const int threads = static_cast<int>(spec.strategy().threads());
  config.server_threads = threads != 0 ? threads : (pool ? kDefaultPoolServerThreads : LogicalCpuCount());
  const uint32_t queue = OrDefault(spec.strategy().limit(), kDefaultPoolServerQueue);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("strategy.limit", queue, 1, 1'000'000));
  config.queue_capacity = static_cast<int>(queue);
  config.stack_kib = spec.strategy().stack_kib();
  return config;
}

}  // namespace fleetmark::engine
