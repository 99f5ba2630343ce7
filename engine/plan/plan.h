// Plans: loading, validating and expanding a fleetmark plan (proto/fleetmark/v1/plan.proto).
//
// A plan is parsed by protobuf itself (text format or JSON), validated against the
// registries (engine/common/, engine/strategies/ and engine/scenarios/registry.h) and
// the documented caps, then expanded into the list of cases the runner measures. Depends only on the generated protos
// and Abseil, so the coordinator can validate plans without linking the engine's strategies.
//
//   FLEETMARK_ASSIGN_OR_RETURN(ParsedPlan parsed, LoadPlanFile("plans/s1.txtpb"));
//   FLEETMARK_RETURN_IF_ERROR(ValidatePlan(parsed));   // errors name field + line:column
//   std::vector<v1::CaseSpec> cases = ExpandCases(parsed.plan, /*quick=*/false);
//
// Every function here is pure (no global state) and safe to call from any thread.
#pragma once

#include "engine/common/input_file.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Caps enforced by ValidatePlan (docs/architecture.md, "Plans are bounded"). The caps and
// defaults of the repetition loop (kMaxRepetitionsCap, kMaxSecondsPerCaseCap,
// kDefaultTargetCiPercent, ...) are engine/measure/stop_rule.h's, and those of the
// memory/fanout/load parameters engine/scenarios/param_rules.h's (header-only rules),
// and threads, batch tasks and stack sizes engine/strategies/limits.h's (kMaxThreads,
// kMaxBatchTasks, kMinStackKib, kMaxStackKib), which the strategies enforce again.
inline constexpr double kMaxWarmupSeconds = 3'600;
inline constexpr double kMaxCooldownSeconds = 3'600;
inline constexpr uint32_t kMaxRounds = 1'000;
inline constexpr uint32_t kMaxCooldownRetries = 100;
inline constexpr uint32_t kMaxCases = 100'000;             // after expansion
inline constexpr size_t kMaxPlanBytes = size_t{16} << 20;  // plan text, 16 MiB
// Plan name and description: printable text (no control characters; the description
// may also hold newlines and tabs), at most this many bytes.
inline constexpr size_t kMaxPlanNameBytes = 128;
inline constexpr size_t kMaxPlanDescriptionBytes = 4096;
// A memory matrix's explicit task_counts: at least this many distinct values, so the
// least-squares line has a residual (two points always fit exactly, R^2 = 1).
inline constexpr int kMinMemoryPoints = 3;
// A batch case's shortest possible repetition (its workload's waits spread over the
// most tasks its strategy can have waiting at once) must be at most
// max(max_seconds_per_case, this): one repetition cannot be interrupted.
inline constexpr double kMaxRepetitionOverrunSeconds = 60;

// Defaults of the other MeasurementSettings fields and of BatchParams (plan.proto).
inline constexpr double kDefaultWarmupSeconds = 0.5;
inline constexpr uint32_t kDefaultRounds = 3;
inline constexpr uint32_t kDefaultBatchTasks = 100;

enum class PlanFormat { kText, kJson };

// ".json" -> kJson; anything else (".txtpb", ".textproto", ".pbtxt", ...) -> kText.
PlanFormat PlanFormatFromPath(std::string_view path);

// The format of a plan read from `path`: JSON if the path ends in ".json" or the
// text's first non-blank character is '{' (a text-format plan never starts so), else
// text. Lets "-" (standard input) and extension-less files hold JSON.
PlanFormat SniffPlanFormat(std::string_view path, std::string_view text);

// LoadPlanFile's path for standard input, and the source name its errors use.
inline constexpr std::string_view kStdinPlanPath = kStdinPath;  // engine/common/input_file.h
inline constexpr std::string_view kStdinSourceName = "<stdin>";

// Where the fields of a text-format plan were written (line:column, 1-based).
// Opaque; produced by ParsePlan for text plans. Immutable after parsing.
class PlanSourceMap;

// A parsed (not yet validated) plan and, for text plans, where each field came from.
struct ParsedPlan {
  v1::Plan plan;
  std::string source_name;  // file path or "<plan>" for in-memory text
  // Null for JSON plans (protobuf's JSON parser keeps no positions).
  std::shared_ptr<const PlanSourceMap> source_map;
};

// Parses `text` with protobuf's TextFormat::Parser (kText) or, after strict checks
// (json_check.h: duplicate keys, trailing commas, wrong JSON types), JsonStringToMessage
// (kJson). InvalidArgument on a syntax error, unknown field or wrong type, or text over
// kMaxPlanBytes; errors read "<source_name>:<line>:<column>: <field path>: <what>"
// (JSON type errors: "<source_name>: <field path>: <what>"), input bytes C-escaped. A
// text plan's value protobuf refuses or misreads without its field's range (`threads:
// many`, 1.5 or 1e400 for an integer, past the field's type, 1e400 for a number, which
// protobuf reads as infinity) is refused with the range ValidatePlan holds the field to,
// e.g. `p.txtpb:7:35: plan.matrix[0].strategies[0].threads: expected an integer, 0 <=
// threads <= 10000, got "many"`; a byte outside ASCII outside quotes, a control
// character and a NUL byte (anywhere) are named as such. A leading UTF-8 byte order
// mark is skipped.
absl::StatusOr<ParsedPlan> ParsePlan(std::string_view text, PlanFormat format, std::string_view source_name = "<plan>");

// Reads and parses the plan at `path` (format: SniffPlanFormat); "-" reads standard
// input. NotFound if it does not exist, PermissionDenied if unreadable; InvalidArgument
// if it is not a regular file (directory, FIFO, device: refused before any read, so a
// FIFO without a writer cannot block), is larger than kMaxPlanBytes, or is malformed.
absl::StatusOr<ParsedPlan> LoadPlanFile(const std::string& path);

// Checks names against engine/common/registry.h and every number against its documented
// range. Returns OK or InvalidArgument whose message names the field path, the allowed
// range and the value, e.g.
//   "s1.txtpb:7:38: plan.matrix[0].strategies[2].threads: 0 <= threads <= 10000, got 20000"
// (the "file:line:column: " prefix only when a source map is available). Also rejects
// plans whose expansion yields no case, more than kMaxCases cases, or duplicate case ids
// (naming the repeated list element), a name/description with control characters or
// over kMaxPlanNameBytes/kMaxPlanDescriptionBytes, non-canonical placements ("cpus: 0"),
// threads on strategies that ignore them, stack_kib in 1..15, memory task_counts with
// fewer than kMinMemoryPoints distinct values, and batch cases whose single repetition
// cannot finish within max(max_seconds_per_case, kMaxRepetitionOverrunSeconds).
// Both the full and the quick form of the plan are checked.
absl::Status ValidatePlan(const ParsedPlan& parsed);
absl::Status ValidatePlan(const v1::Plan& plan);

// Plan.preconditions (the preflight gates, engine/health/preflight.h): ranges of the
// fields and defaults of the unset timing fields.
inline constexpr double kMaxGateLoadAverage = 4'096;
inline constexpr uint64_t kMaxGateFreeMemoryMib = uint64_t{1} << 24;  // 16 TiB
inline constexpr uint32_t kMaxGateChecks = 100;
inline constexpr double kMinGateCpuSampleSeconds = 0.1;
inline constexpr double kMaxGateCpuSampleSeconds = 60;
inline constexpr double kDefaultGateCooldownSeconds = 30;
inline constexpr uint32_t kDefaultGateChecks = 3;
inline constexpr double kDefaultGateCpuSampleSeconds = 2;
inline constexpr size_t kMaxGovernorLength = 32;

// Whether any gate of `preconditions` is set (the runner checks nothing otherwise).
bool HasGates(const v1::Preconditions& preconditions);

// Checks `preconditions` alone (ValidatePlan does it for plan.preconditions): each set
// gate in its range (min_battery_percent 1..100, max_temperature_c in the sensor range
// -40..150 °C, max_other_cpu_percent 0..100, max_load_average 0..kMaxGateLoadAverage,
// required_governor [a-z0-9_]{1,32}, min_free_memory_mib 1..kMaxGateFreeMemoryMib,
// cooldown_seconds 0..3600, max_checks 1..100, cpu_sample_seconds 0.1..60).
// InvalidArgument "<field>.<name>: <range>, got <value>" with `field` as the prefix,
// e.g. "plan.preconditions". Pure function.
absl::Status ValidatePreconditions(const v1::Preconditions& preconditions, std::string_view field);

// The plan as `--quick` runs it: `quick`'s non-zero fields replace `measurement`'s
// (booleans: quick.include_setup = true sets it), and `quick_matrix` replaces `matrix`
// when non-empty; measurement.max_processes becomes kQuickMaxProcesses unless
// quick.max_processes is set (processes keep their minimum, kMinBatchProcesses, in
// every mode). `quick` and `quick_matrix` are cleared in the result.
v1::Plan ApplyQuick(const v1::Plan& plan);

// `settings` with every zero field replaced by its documented default (a default
// min_repetitions is lowered to an explicit smaller max_repetitions, as the stop rule
// does, and a default min_seconds_per_case to a smaller max_seconds_per_case). Use on ApplyQuick's result for quick
// runs.
v1::MeasurementSettings ResolveMeasurement(const v1::MeasurementSettings& settings);

// The cases of `plan` (after ApplyQuick when `quick`), in plan order: for each matrix,
// the cartesian product scenario × workloads × io_modes × strategies × placements,
// with defaults filled (io_modes [blocking], placements [any], batch tasks 100,
// strategy label) and a stable case_id
// "<scenario>/<workload or ->/<io_mode>/<label>/<placement>". Call on a validated plan
// (invalid input yields best-effort cases, never a crash).
std::vector<v1::CaseSpec> ExpandCases(const v1::Plan& plan, bool quick);

// A strategy's display label: its `label`, else "<name>" (threads 0) or
// "<name>_<threads>".
std::string StrategyLabel(const v1::StrategySpec& strategy);

}  // namespace fleetmark::engine
