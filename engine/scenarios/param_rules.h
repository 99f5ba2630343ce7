// The ranges and defaults of the scenario parameters (plan.proto's MemoryParams,
// FanoutParams, LoadParams), defined once: the plan validator (ValidatePlan, which
// the coordinator runs without linking the scenarios) and the scenarios' own
// resolution (params.h's Resolve*Config, which the agent runs again) both read these
// rules. Header-only over the generated messages (target fleetmark_scenario_rules).
//
//   if (auto broken = FirstBrokenRule(kFanoutRules, spec.fanout(), RuleForm::kPlan))
//     return Error(path + broken->field, broken->detail);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::engine {

// ---- memory (S2) ----
inline constexpr uint32_t kMaxMemoryTasks = 1'000'000;  // per point
inline constexpr int kMaxMemoryPoints = 64;
inline constexpr uint32_t kMaxTouchStackKib = 1u << 20;  // and < the stack size
inline constexpr uint32_t kDefaultMaxMemoryMib = 1024;
inline constexpr uint32_t kMaxMemoryMib = 1u << 20;  // 1 TiB
inline constexpr uint32_t kDefaultPointTimeoutSeconds = 120;
inline constexpr uint32_t kMaxPointTimeoutSeconds = 3600;

// ---- fanout (S4) ----
inline constexpr uint32_t kMaxFanoutRequests = 100'000;
inline constexpr uint32_t kMaxFanoutCalls = 100'000;
inline constexpr uint64_t kMaxFanoutTotalCalls = 10'000'000;  // requests × calls
inline constexpr uint32_t kMaxFanoutDelayMs = 60'000;
inline constexpr uint32_t kMaxFanoutTimeoutMs = 600'000;

// ---- load (S3) ----
inline constexpr uint32_t kMaxLoadUsers = 100'000;
inline constexpr uint32_t kMaxLoadRampSeconds = 3600;
inline constexpr uint32_t kMaxLoadHoldSeconds = 3600;
inline constexpr uint32_t kMaxLoadThinkMs = 600'000;
inline constexpr uint32_t kMaxLoadObjects = 100'000;
inline constexpr uint32_t kMaxLoadDbWaitUs = 10'000'000;
inline constexpr uint32_t kMaxLoadRequestTimeoutMs = 600'000;
inline constexpr uint32_t kMaxLoadClientThreads = 64;

// ---- synthetic workload (plan.proto's SyntheticParams, Sweep) ----
inline constexpr uint32_t kMaxSyntheticCpuNs = 1'000'000'000;  // 1 s per task
inline constexpr uint32_t kMaxSyntheticWaitUs = 10'000'000;    // 10 s mean per task
inline constexpr uint32_t kMaxSyntheticAllocBytes = 1u << 30;  // 1 GiB
inline constexpr uint32_t kMaxSyntheticTouchKib = 1u << 20;    // 1 GiB
inline constexpr std::string_view kWaitDistributions[] = {"fixed", "uniform", "exponential", "lognormal"};
inline constexpr int kMaxSweeps = 2;        // swept parameters per matrix
inline constexpr int kMaxSweepPoints = 64;  // values per swept parameter

// One scalar field: 0 in the plan means `default_value` (when it is not 0), and the
// value in effect must lie in [min, max].
template <typename Params>
struct ParamRule {
  std::string_view field;  // the proto field name
  uint32_t (Params::*get)() const;
  uint32_t default_value;  // 0 = no default: the value is used as written
  uint32_t min, max;       // of the value in effect
};

// The value in effect: the field, or its default when the field holds 0. Pure.
template <typename Params>
constexpr uint32_t RuleValue(const ParamRule<Params>& rule, const Params& params) {
  const uint32_t v = (params.*rule.get)();
  return v == 0 && rule.default_value != 0 ? rule.default_value : v;
}

// How a broken rule is reported. kPlan: the value as written, with 0 ("the default")
// allowed: "0 <= requests <= 100000, got 200000". kResolved: the value in effect:
// "1 <= requests <= 100000, got 200000".
enum class RuleForm { kPlan, kResolved };

struct BrokenRule {
  std::string field;   // relative to the params message, e.g. "requests"
  std::string detail;  // "<lo> <= <field> <= <hi>, got <value>"
};

// The rule's range as text for `value` when it is broken, else nullopt. Pure.
template <typename Params>
std::optional<BrokenRule> CheckRule(const ParamRule<Params>& rule, const Params& params, RuleForm form) {
  const uint32_t value = form == RuleForm::kPlan ? (params.*rule.get)() : RuleValue(rule, params);
  const uint32_t lo = form == RuleForm::kPlan && rule.default_value != 0 ? 0 : rule.min;
  if (value >= lo && value <= rule.max) return std::nullopt;
  return BrokenRule{std::string(rule.field),
                    absl::StrCat(lo, " <= ", std::string(rule.field), " <= ", rule.max, ", got ", value)};
}

// The first rule of `rules` that `params` breaks, or nullopt. Pure.
template <typename Params, size_t N>
std::optional<BrokenRule> FirstBrokenRule(const ParamRule<Params> (&rules)[N], const Params& params, RuleForm form) {
  for (const ParamRule<Params>& rule : rules) {
    if (auto broken = CheckRule(rule, params, form)) return broken;
  }
  return std::nullopt;
}

// The scalar fields, in the order they are checked. MemoryParams.task_counts (a list:
// 1..kMaxMemoryPoints values, each 1..kMaxMemoryTasks) and the cross-field rules
// (requests × calls, touch_stack_kib vs stack_kib) are checked by the callers with the
// constants above.
inline constexpr ParamRule<v1::MemoryParams> kMemoryTouchStack = {"touch_stack_kib", &v1::MemoryParams::touch_stack_kib,
                                                                  0, 0, kMaxTouchStackKib};
inline constexpr ParamRule<v1::MemoryParams> kMemoryRules[] = {
    kMemoryTouchStack,
    {"max_memory_mib", &v1::MemoryParams::max_memory_mib, kDefaultMaxMemoryMib, 1, kMaxMemoryMib},
    {"point_timeout_seconds", &v1::MemoryParams::point_timeout_seconds, kDefaultPointTimeoutSeconds, 1,
     kMaxPointTimeoutSeconds},
};

inline constexpr ParamRule<v1::FanoutParams> kFanoutRequests = {"requests", &v1::FanoutParams::requests, 1, 1,
                                                                kMaxFanoutRequests};
inline constexpr ParamRule<v1::FanoutParams> kFanoutCalls = {"calls_per_request", &v1::FanoutParams::calls_per_request,
                                                             5, 1, kMaxFanoutCalls};
inline constexpr ParamRule<v1::FanoutParams> kFanoutDelay = {"delay_ms", &v1::FanoutParams::delay_ms, 500, 1,
                                                             kMaxFanoutDelayMs};
inline constexpr ParamRule<v1::FanoutParams> kFanoutTimeout = {"timeout_ms", &v1::FanoutParams::timeout_ms, 3000, 1,
                                                               kMaxFanoutTimeoutMs};
inline constexpr ParamRule<v1::FanoutParams> kFanoutRules[] = {kFanoutRequests, kFanoutCalls, kFanoutDelay,
                                                               kFanoutTimeout};

inline constexpr ParamRule<v1::LoadParams> kLoadUsers = {"users", &v1::LoadParams::users, 1000, 1, kMaxLoadUsers};
inline constexpr ParamRule<v1::LoadParams> kLoadRamp = {"ramp_seconds", &v1::LoadParams::ramp_seconds, 5, 1,
                                                        kMaxLoadRampSeconds};
inline constexpr ParamRule<v1::LoadParams> kLoadHold = {"hold_seconds", &v1::LoadParams::hold_seconds, 15, 1,
                                                        kMaxLoadHoldSeconds};
inline constexpr ParamRule<v1::LoadParams> kLoadThink = {"think_ms", &v1::LoadParams::think_ms, 500, 1,
                                                         kMaxLoadThinkMs};
inline constexpr ParamRule<v1::LoadParams> kLoadObjects = {"objects", &v1::LoadParams::objects, 1000, 1,
                                                           kMaxLoadObjects};
inline constexpr ParamRule<v1::LoadParams> kLoadDbWait = {"db_wait_us", &v1::LoadParams::db_wait_us, 1000, 1,
                                                          kMaxLoadDbWaitUs};
inline constexpr ParamRule<v1::LoadParams> kLoadClientThreads = {"client_threads", &v1::LoadParams::client_threads, 1,
                                                                 1, kMaxLoadClientThreads};
inline constexpr ParamRule<v1::LoadParams> kLoadRequestTimeout = {
    "request_timeout_ms", &v1::LoadParams::request_timeout_ms, 10'000, 1, kMaxLoadRequestTimeoutMs};
inline constexpr ParamRule<v1::LoadParams> kLoadRules[] = {
    kLoadUsers, kLoadRamp, kLoadHold, kLoadThink, kLoadObjects, kLoadDbWait, kLoadClientThreads, kLoadRequestTimeout};

// The synthetic workload's numeric parameters: every one may be swept (Sweep.param
// names one of these fields), and every swept value must lie in its range too.
inline constexpr ParamRule<v1::SyntheticParams> kSyntheticRules[] = {
    {"cpu_ns", &v1::SyntheticParams::cpu_ns, 0, 0, kMaxSyntheticCpuNs},
    {"wait_us", &v1::SyntheticParams::wait_us, 0, 0, kMaxSyntheticWaitUs},
    {"alloc_bytes", &v1::SyntheticParams::alloc_bytes, 0, 0, kMaxSyntheticAllocBytes},
    {"touch_kib", &v1::SyntheticParams::touch_kib, 0, 0, kMaxSyntheticTouchKib},
};

// The rule of synthetic parameter `field`, or null when it is not one. Pure.
inline const ParamRule<v1::SyntheticParams>* FindSyntheticRule(std::string_view field) {
  for (const ParamRule<v1::SyntheticParams>& rule : kSyntheticRules) {
    if (rule.field == field) return &rule;
  }
  return nullptr;
}

}  // namespace fleetmark::engine
