#include "engine/common/partial_result.h"
#include "engine/report/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "engine/common/synthetic_text.h"
#include "engine/common/text.h"
#include "engine/report/case_names.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"
#include "engine/scenarios/registry.h"
#include "engine/topology/conditions_text.h"

namespace fleetmark::report {
namespace {

using fleetmark::v1::CaseResult;
using fleetmark::v1::CaseSpec;

enum class Kind { kBatch, kMemory, kFanout, kLoad };

// By the result's scenario part; a case that filled none (failed, resource exhausted)
// by the part its scenario fills (the registry's result_case); batch and unknown
// scenarios fill none.
Kind KindOf(const CaseResult& r) {
  CaseResult::ScenarioResultCase part = r.scenario_result_case();
  if (part == CaseResult::SCENARIO_RESULT_NOT_SET) {
    if (const engine::ScenarioTraits* s = engine::FindScenario(r.spec().scenario())) part = s->result_case;
  }
  switch (part) {
    case CaseResult::kMemory:
      return Kind::kMemory;
    case CaseResult::kFanout:
      return Kind::kFanout;
    case CaseResult::kLoad:
      return Kind::kLoad;
    case CaseResult::SCENARIO_RESULT_NOT_SET:
      break;
  }
  return Kind::kBatch;
}

std::string Fixed(double value, int decimals, const char* suffix = "") {
  if (!std::isfinite(value)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, value, suffix);
  return buf;
}

std::string Millis(double ms) { return FormatNanos(ms * 1e6); }

// The workload with the synthetic parameters of its point: "synthetic[cpu_ns=1000]".
std::string WorkloadTitle(const CaseSpec& s) {
  if (!s.has_synthetic()) return s.workload();
  return engine::SyntheticWorkloadText(s.synthetic(), {s.swept().begin(), s.swept().end()}, /*with_swept=*/true);
}

// Title of the group a result belongs to: the dimensions shared by its rows.
std::string GroupTitle(const CaseResult& r, Kind kind) {
  const CaseSpec& s = r.spec();
  std::vector<std::string> parts;
  parts.push_back(std::string(engine::ScenarioOrDefault(s.scenario())));
  if (!s.workload().empty()) parts.push_back(WorkloadTitle(s));
  if (kind != Kind::kLoad) parts.push_back(s.io_mode().empty() ? "blocking" : s.io_mode());
  switch (kind) {
    case Kind::kBatch:
      parts.push_back(absl::StrCat("n=", BatchTasks(s)));
      break;
    case Kind::kFanout:
      if (s.has_fanout()) {
        const auto& f = s.fanout();
        // Zero fields mean plan.proto's documented defaults.
        auto or_default = [](uint32_t v, uint32_t d) { return v == 0 ? d : v; };
        parts.push_back(absl::StrCat("R=", or_default(f.requests(), 1), " D=", or_default(f.calls_per_request(), 5),
                                     " delay=", or_default(f.delay_ms(), 500), "ms", f.random_delay() ? " random" : "",
                                     " timeout=", or_default(f.timeout_ms(), 3000), "ms"));
      }
      break;
    case Kind::kLoad:
      if (s.has_load()) {
        parts.push_back(absl::StrCat("users=", s.load().users() == 0 ? 1000 : s.load().users()));
      }
      break;
    case Kind::kMemory:
      break;
  }
  if (!s.placement().empty() && s.placement() != "any") {
    parts.push_back(absl::StrCat("placement ", s.placement()));
  }
  return absl::StrJoin(parts, " · ");
}

bool IsOk(const CaseResult& r) { return r.status() == fleetmark::v1::CASE_STATUS_OK; }

// "ok", "ok (rep cap)", "unsupported: reason", with " [throttled]" / " [unstable]" /
// " [contended 53%]" / " [harness 12%]" (or " [harness >= median]") when flagged, and
// " [partial]" for a partial result.
std::string StatusCell(const CaseResult& r, bool with_stop_reason) {
  std::string cell = StatusWord(r.status());
  if (IsOk(r)) {
    if (with_stop_reason) {
      switch (r.stop_reason()) {
        case fleetmark::v1::STOP_REASON_MAX_REPETITIONS:
          cell += " (rep cap)";
          break;
        case fleetmark::v1::STOP_REASON_MAX_TIME:
          cell += " (time cap)";
          break;
        default:
          break;
      }
    }
  } else if (!r.message().empty()) {
    absl::StrAppend(&cell, ": ", r.message());
  }
  if (engine::IsPartialResult(r)) cell += " [partial]";
  if (r.throttled()) cell += " [throttled]";
  if (r.unstable()) cell += " [unstable]";
  if (r.contended()) absl::StrAppend(&cell, " [contended ", static_cast<int>(100 * r.other_cpu_share() + 0.5), "%]");
  if (r.harness_heavy()) absl::StrAppend(&cell, " ", HarnessNote(r.harness_share()));
  return cell;
}

// OK rows first, ordered by `key` (ascending, or descending when `descending`), then
// label; non-OK rows after, in report order.
template <typename Key>
std::vector<const CaseResult*> Ranked(std::vector<const CaseResult*> rows, Key key, bool descending = false) {
  std::stable_sort(rows.begin(), rows.end(), [&](const CaseResult* a, const CaseResult* b) {
    if (IsOk(*a) != IsOk(*b)) return IsOk(*a);
    if (!IsOk(*a)) return false;
    const double ka = key(*a), kb = key(*b);
    if (ka != kb) return descending ? ka > kb : ka < kb;
    return StrategyLabel(a->spec()) < StrategyLabel(b->spec());
  });
  return rows;
}

std::string Ratio(double value, double best) {
  if (!(best > 0) || !std::isfinite(value)) return "-";
  return Fixed(value / best, 2, "×");
}

// Whether some row was measured in several processes (measurement.processes >= 2).
bool AnyProcesses(const std::vector<const CaseResult*>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CaseResult* r) { return r->process_medians_ns_size() >= 2; });
}

// Whether some row had its energy measured (a source, resolved or not).
bool AnyEnergy(const std::vector<const CaseResult*>& rows) {
  return std::any_of(rows.begin(), rows.end(),
                     [](const CaseResult* r) { return r->has_energy() && r->energy().unavailable().empty(); });
}

// The J/task (net) and W cells of a row: "unresolved", "-" without a measurement.
std::pair<std::string, std::string> EnergyCells(const CaseResult& r) {
  const fleetmark::v1::CaseEnergy& e = r.energy();
  if (!r.has_energy() || !e.unavailable().empty()) return {"-", "-"};
  if (e.unresolved()) return {"unresolved", "-"};
  std::string per_task = FormatSi(e.net_joules_per_task(), "J");
  if (e.process_net_joules_per_repetition_size() >= 2 && e.net_joules_per_repetition() != 0) {
    const double half = std::max(e.net_joules_per_repetition() - e.net_joules_per_repetition_low(),
                                 e.net_joules_per_repetition_high() - e.net_joules_per_repetition());
    absl::StrAppend(&per_task, " ±", Fixed(100 * half / std::fabs(e.net_joules_per_repetition()), 0, "%"));
  }
  if (e.charging()) absl::StrAppend(&per_task, " [charging]");
  return {per_task, FormatSi(e.mean_power_watts(), "W")};
}

// One batch table; its CPU/rep and allocs/rep columns only when `counters`.
TextTable BatchTable(const std::vector<const CaseResult*>& group, bool counters) {
  std::vector<Column> columns = {
      {"strategy"},          {"threads", Align::kRight}, {"median", Align::kRight}, {"95% CI", Align::kRight},
      {"±%", Align::kRight}, {"n", Align::kRight},       {"ratio", Align::kRight}};
  const bool processes = AnyProcesses(group);
  if (processes) {
    columns.push_back({"btw", Align::kRight});
    columns.push_back({"next ±%", Align::kRight});
  }
  const bool energy = AnyEnergy(group);
  if (energy) {
    columns.push_back({"J/task", Align::kRight});
    columns.push_back({"W", Align::kRight});
  }
  if (counters) {
    columns.push_back({"CPU/rep", Align::kRight});
    columns.push_back({"allocs/rep", Align::kRight});
  }
  columns.push_back({"status"});
  TextTable table(std::move(columns));
  const auto rows = Ranked(group, [](const CaseResult& r) { return r.stats().median_ns(); });
  double fastest = 0;
  for (const CaseResult* r : rows) {
    if (IsOk(*r) && r->stats().count() > 0 && r->stats().median_ns() > 0) {
      fastest = r->stats().median_ns();
      break;
    }
  }
  for (const CaseResult* r : rows) {
    const auto& st = r->stats();
    // A partial result (cancelled after some rounds) shows its numbers, marked.
    const bool measured = (IsOk(*r) || engine::IsPartialResult(*r)) && st.count() > 0;
    std::vector<std::string> cells = {StrategyLabel(r->spec()), ThreadsText(*r)};
    if (measured) {
      cells.push_back(FormatNanos(st.median_ns()));
      cells.push_back(absl::StrCat("[", FormatNanos(st.ci_low_ns()), ", ", FormatNanos(st.ci_high_ns()), "]"));
      cells.push_back(Fixed(st.ci_half_width_percent(), 1, "%"));
      cells.push_back(SampleCountText(*r));
      cells.push_back(Ratio(st.median_ns(), fastest));
    } else {
      cells.insert(cells.end(), {"-", "-", "-", "-", "-"});
    }
    if (processes) {
      cells.push_back(measured && r->process_medians_ns_size() >= 2 ? Fixed(100 * r->between_process_share(), 0, "%")
                                                                    : "-");
      cells.push_back(
          measured && st.next_high_ns() > 0 && st.median_ns() > 0
              ? Fixed(100 * std::max(st.median_ns() - st.next_low_ns(), st.next_high_ns() - st.median_ns()) /
                          st.median_ns(),
                      1, "%")
              : "-");
    }
    if (energy) {
      auto [per_task, watts] = EnergyCells(*r);
      cells.push_back(std::move(per_task));
      cells.push_back(std::move(watts));
    }
    if (counters) {
      const auto& c = r->counters();
      cells.push_back(CpuPerRepetitionText(*r));
      const bool counted = c.allocations_counted() || c.allocations() > 0;
      cells.push_back(!measured ? "-" : counted ? FormatCount(static_cast<double>(c.allocations())) : "n/a");
    }
    cells.push_back(StatusCell(*r, /*with_stop_reason=*/true));
    table.AddRow(std::move(cells));
  }
  return table;
}

// The batch table fitted to options.max_width: without its counters columns (and a
// note saying so) when the other columns leave the status less than kReadableStatus
// columns.
std::string FittedBatchTable(const std::vector<const CaseResult*>& group, const TableOptions& options) {
  constexpr size_t kReadableStatus = 24;
  TextTable table = BatchTable(group, options.counters);
  if (options.max_width == 0 || !options.counters || table.LastColumnStart() + kReadableStatus <= options.max_width) {
    return table.Render(options.max_width);
  }
  return absl::StrCat(BatchTable(group, /*counters=*/false).Render(options.max_width),
                      "(CPU/rep and allocs/rep left out to fit ", options.max_width, " columns; --wide shows them)\n");
}

// "unsupported (3): fiber_1, coroutine_1, event_loop_1 — <reason>": the unsupported
// cases of one table in one line (wrapped to `max_width`, continuation lines indented
// by two), the reason being what their messages share once each strategy's own name is
// taken off: the whole message, or the part before its first ": ".
std::string CollapsedUnsupported(const std::vector<const CaseResult*>& rows, size_t max_width) {
  std::vector<std::string> names;
  std::vector<std::string> reasons;
  for (const CaseResult* r : rows) {
    names.push_back(StrategyLabel(r->spec()));
    std::string reason = r->message();
    const std::string own = absl::StrCat(r->spec().strategy().name(), " ");
    if (!r->spec().strategy().name().empty() && absl::StartsWith(reason, own)) reason.erase(0, own.size());
    reasons.push_back(std::move(reason));
  }
  const auto all_equal = [](const std::vector<std::string>& v) {
    return std::all_of(v.begin(), v.end(), [&](const std::string& x) { return x == v.front(); });
  };
  std::string reason;
  if (all_equal(reasons)) {
    reason = reasons.front();
  } else {
    std::vector<std::string> heads;
    // The part before the first ": " or "; " (e.g. "fanout supports direct, ...; got X").
    for (const std::string& x : reasons) heads.push_back(x.substr(0, std::min(x.find(": "), x.find("; "))));
    reason = all_equal(heads) && !heads.front().empty()
                 ? absl::StrCat(heads.front(), " (--wide shows each strategy's reason)")
                 : "for reasons of their own (--wide shows each)";
  }
  const std::string line = EscapeForTerminal(absl::StrCat(
      "unsupported (", rows.size(), "): ", absl::StrJoin(names, ", "), reason.empty() ? "" : " — ", reason));
  const std::vector<std::string> lines = WrapText(line, max_width == 0 ? 0 : std::max<size_t>(max_width, 40) - 2);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) absl::StrAppend(&out, i == 0 ? "" : "  ", lines[i], "\n");
  return out;
}

}  // namespace

bool HasMemorySlope(const CaseResult& r) {
  if (!r.has_memory()) return false;
  if (IsOk(r)) return true;
  return r.memory().points_fitted() >= 2 && r.status() != fleetmark::v1::CASE_STATUS_UNSUPPORTED &&
         r.status() != fleetmark::v1::CASE_STATUS_CANCELLED;
}

std::string MemorySlopeText(const CaseResult& r) {
  if (!HasMemorySlope(r)) return "-";
  const fleetmark::v1::MemoryResult& m = r.memory();
  std::string cell = Fixed(m.slope_kib_per_task(), 2);
  if (m.left_out_tasks_size() > 0) absl::StrAppend(&cell, " (without ", absl::StrJoin(m.left_out_tasks(), ", "), ")");
  return cell;
}

namespace {

std::string MemoryTable(const std::vector<const CaseResult*>& group, size_t max_width) {
  TextTable table({{"strategy"},
                   {"threads", Align::kRight},
                   {"stack", Align::kRight},
                   {"points (tasks:KiB over baseline)"},
                   {"KiB/task", Align::kRight},
                   {"+kstack", Align::kRight},
                   {"R²", Align::kRight},
                   {"ratio", Align::kRight},
                   {"status"}});
  const auto rows = Ranked(group, [](const CaseResult& r) { return r.memory().slope_kib_per_task(); });
  double smallest = 0;
  for (const CaseResult* r : rows) {
    const double slope = r->memory().slope_kib_per_task();
    if (HasMemorySlope(*r) && slope > 0 && (smallest == 0 || slope < smallest)) smallest = slope;
  }
  for (const CaseResult* r : rows) {
    const auto& m = r->memory();
    std::vector<std::string> points;
    for (const auto& p : m.points()) {
      if (p.status() != fleetmark::v1::CASE_STATUS_OK) {
        points.push_back(absl::StrCat(p.tasks(), ":", StatusWord(p.status())));
        continue;
      }
      const double kib = (static_cast<double>(p.rss_bytes()) - static_cast<double>(p.baseline_rss_bytes())) / 1024;
      points.push_back(absl::StrCat(p.tasks(), ":", Fixed(kib, 0)));
    }
    const bool ok = HasMemorySlope(*r);
    table.AddRow({StrategyLabel(r->spec()), ThreadsText(*r),
                  !m.stack_source().empty() ? m.stack_source()
                  : m.stack_kib() > 0       ? absl::StrCat(m.stack_kib(), " KiB")
                                            : "default",
                  points.empty() ? "-" : absl::StrJoin(points, " "), MemorySlopeText(*r),
                  ok && m.total_slope_kib_per_task() != 0 ? Fixed(m.total_slope_kib_per_task(), 2) : "-",
                  ok ? Fixed(m.r_squared(), 3) : "-", ok ? Ratio(m.slope_kib_per_task(), smallest) : "-",
                  StatusCell(*r, /*with_stop_reason=*/false)});
  }
  return table.Render(max_width);
}

std::string FanoutTable(const std::vector<const CaseResult*>& group, size_t max_width) {
  TextTable table({{"strategy"},
                   {"threads", Align::kRight},
                   {"total", Align::kRight},
                   {"ok", Align::kRight},
                   {"timeouts", Align::kRight},
                   {"failures", Align::kRight},
                   {"p50", Align::kRight},
                   {"p99", Align::kRight},
                   {"peak threads", Align::kRight},
                   {"ratio", Align::kRight},
                   {"executor"},
                   {"status"}});
  const auto rows = Ranked(group, [](const CaseResult& r) { return r.fanout().total_ms(); });
  const double fastest = rows.empty() || !IsOk(*rows[0]) ? 0 : rows[0]->fanout().total_ms();
  for (const CaseResult* r : rows) {
    const auto& f = r->fanout();
    const bool ok = IsOk(*r) && r->has_fanout();
    if (!ok) {
      table.AddRow({StrategyLabel(r->spec()), ThreadsText(*r), "-", "-", "-", "-", "-", "-", "-", "-", "-",
                    StatusCell(*r, false)});
      continue;
    }
    table.AddRow({StrategyLabel(r->spec()), ThreadsText(*r), Millis(f.total_ms()),
                  FormatCount(static_cast<double>(f.successes())), FormatCount(static_cast<double>(f.timeouts())),
                  FormatCount(static_cast<double>(f.failures())), Millis(f.latency_p50_ms()),
                  Millis(f.latency_p99_ms()), absl::StrCat(f.peak_threads()), Ratio(f.total_ms(), fastest),
                  f.executor().empty() ? "-" : f.executor(), StatusCell(*r, false)});
  }
  return table.Render(max_width);
}

std::string LoadTable(const std::vector<const CaseResult*>& group, size_t max_width) {
  // threads: the server model's worker threads (server_threads) when reported.
  TextTable table({{"strategy"},
                   {"threads", Align::kRight},
                   {"req/s", Align::kRight},
                   {"mean", Align::kRight},
                   {"p50", Align::kRight},
                   {"p95", Align::kRight},
                   {"p99", Align::kRight},
                   {"p99.9", Align::kRight},
                   {"errors", Align::kRight},
                   {"peak RSS", Align::kRight},
                   {"gen CPU", Align::kRight},
                   {"status"}});
  const auto rows = Ranked(
      group, [](const CaseResult& r) { return r.load().throughput_rps(); }, /*descending=*/true);
  for (const CaseResult* r : rows) {
    const auto& l = r->load();
    const bool ok = IsOk(*r) && r->has_load();
    if (!ok) {
      table.AddRow({StrategyLabel(r->spec()), ThreadsText(*r), "-", "-", "-", "-", "-", "-", "-", "-", "-",
                    StatusCell(*r, false)});
      continue;
    }
    const uint64_t errors = l.errors_refused() + l.errors_timeout() + l.errors_5xx() + l.errors_other();
    table.AddRow(
        {StrategyLabel(r->spec()),
         ThreadsCell(l.server_threads() > 0 ? l.server_threads() : r->threads_used(), r->spec().strategy().threads()),
         Fixed(l.throughput_rps(), 1), Millis(l.latency_mean_ms()), Millis(l.latency_p50_ms()),
         Millis(l.latency_p95_ms()), Millis(l.latency_p99_ms()), Millis(l.latency_p999_ms()),
         FormatCount(static_cast<double>(errors)), FormatBytes(static_cast<double>(l.peak_rss_bytes())),
         Fixed(l.generator_cpu_percent(), 0, "%"), StatusCell(*r, false)});
  }
  return table.Render(max_width);
}

}  // namespace

std::string ThreadsCell(uint32_t used, uint32_t requested) {
  if (requested > 0 && used < requested) return absl::StrCat(used, " of ", requested);
  if (requested > 0 && used > requested) return absl::StrCat(used, " (", requested, " req.)");
  return absl::StrCat(used);
}

std::string ThreadsText(const CaseResult& r) {
  const uint32_t requested = r.spec().strategy().threads();
  const uint32_t used = r.threads_used();
  // A partial result ran (its finished rounds): its threads are shown as an OK case's.
  if (!IsOk(r) && !engine::IsPartialResult(r) && used == 0)
    return requested > 0 ? absl::StrCat(requested, " req.") : "-";
  return ThreadsCell(used, requested);
}

std::string HarnessNote(double harness_share) {
  const long long percent = std::isfinite(harness_share) ? std::llround(harness_share * 100) : 100;
  if (percent >= 100) return "[harness >= median]";
  return absl::StrCat("[harness ", percent, "%]");
}

std::string SampleCountText(const CaseResult& r) {
  const uint64_t kept = r.stats().count();
  if (r.transient_samples() == 0) return absl::StrCat(kept);
  return absl::StrCat(kept, " of ", kept + r.transient_samples());
}

std::string CpuPerRepetitionText(const CaseResult& r) {
  const auto& c = r.counters();
  const double reps = static_cast<double>(c.repetitions());
  if (!IsOk(r) || r.stats().count() == 0 || !(reps > 0)) return "-";
  return FormatNanos((c.cpu_user_seconds() + c.cpu_system_seconds()) * 1e9 / reps);
}

std::string FormatTable(const fleetmark::v1::RunReport& report, const TableOptions& options) {
  struct Group {
    std::string title;
    Kind kind;
    std::vector<const CaseResult*> rows;
  };
  std::vector<Group> groups;
  std::map<std::pair<int, std::string>, size_t> index;
  for (const CaseResult& r : report.results()) {
    const Kind kind = KindOf(r);
    std::string title = GroupTitle(r, kind);
    auto [it, inserted] = index.try_emplace({static_cast<int>(kind), title}, groups.size());
    if (inserted) groups.push_back({std::move(title), kind, {}});
    groups[it->second].rows.push_back(&r);
  }

  std::string out;
  const auto& host = report.host();
  std::vector<std::string> heading;
  if (!report.plan_name().empty()) heading.push_back(absl::StrCat("plan ", report.plan_name()));
  if (!options.agent_name.empty()) heading.push_back(absl::StrCat("agent ", options.agent_name));
  if (!host.cpu_model().empty()) heading.push_back(host.cpu_model());
  if (host.logical_cpus() > 0) {
    std::string cpus = absl::StrCat(host.logical_cpus(), " CPUs");
    if (host.has_limits()) {
      // What the defaults followed, and what limited it (taskset, a cgroup quota).
      const auto& limits = host.limits();
      absl::StrAppend(&cpus, " (allowed ", limits.allowed_cpus(), " of ", limits.machine_cpus(), " machine CPUs");
      if (limits.cpu_quota() > 0) {
        absl::StrAppend(&cpus, ", CPU quota ", Fixed(limits.cpu_quota(), 2));
      }
      absl::StrAppend(&cpus, ")");
    }
    heading.push_back(std::move(cpus));
  }
  if (!host.hostname().empty()) heading.push_back(absl::StrCat("host name ", host.hostname()));
  if (host.emulated()) {
    heading.push_back("EMULATED (qemu-user): the emulator's numbers, not hardware numbers");
  }
  // Host text comes from agents: never raw control characters on a terminal.
  if (!heading.empty()) absl::StrAppend(&out, EscapeForTerminal(absl::StrJoin(heading, " · ")), "\n\n");
  if (groups.empty()) {
    out += "(no results)\n";
    return out;
  }
  // Energy asked for and not measured: why, once per reason (the host's: once per run).
  std::vector<std::string> unavailable;
  for (const CaseResult& r : report.results()) {
    const std::string& why = r.energy().unavailable();
    if (!why.empty() && std::find(unavailable.begin(), unavailable.end(), why) == unavailable.end()) {
      unavailable.push_back(why);
    }
  }
  for (const std::string& why : unavailable) {
    absl::StrAppend(&out, "energy: unavailable (", EscapeForTerminal(why), ")\n");
  }
  if (!unavailable.empty()) out += '\n';

  bool any_batch = false;
  bool any_processes = false;
  bool any_energy = false;
  bool any_fanout_or_load = false;
  for (const Group& g : groups) {
    absl::StrAppend(&out, "== ", EscapeForTerminal(g.title), " ==\n");
    std::vector<const CaseResult*> shown;
    std::vector<const CaseResult*> unsupported;
    for (const CaseResult* r : g.rows) {
      (r->status() == fleetmark::v1::CASE_STATUS_UNSUPPORTED ? unsupported : shown).push_back(r);
    }
    if (!options.collapse_unsupported || unsupported.size() < 2) {
      shown = g.rows;
      unsupported.clear();
    }
    if (!shown.empty()) {
      switch (g.kind) {
        case Kind::kBatch:
          out += FittedBatchTable(shown, options);
          any_batch = true;
          any_processes = any_processes || AnyProcesses(shown);
          any_energy = any_energy || AnyEnergy(shown);
          break;
        case Kind::kMemory:
          out += MemoryTable(shown, options.max_width);
          break;
        case Kind::kFanout:
          out += FanoutTable(shown, options.max_width);
          any_fanout_or_load = true;
          break;
        case Kind::kLoad:
          out += LoadTable(shown, options.max_width);
          any_fanout_or_load = true;
          break;
      }
    }
    if (!unsupported.empty()) out += CollapsedUnsupported(unsupported, options.max_width);
    out += '\n';
  }
  // Gates the plan set that this device could not judge (no reading): they passed
  // unchecked, which the run must not pass off as checked (issue 32, item 11).
  std::vector<const fleetmark::v1::EnvSnapshot*> starts;
  for (const CaseResult& r : report.results()) {
    if (r.has_env_before()) starts.push_back(&r.env_before());
  }
  if (const std::vector<std::string> unchecked = engine::GatesNotCheckedLines(starts); !unchecked.empty()) {
    out += "gates not checked (no reading on this device, so they passed unchecked; in N of M cases):\n";
    for (const std::string& line : unchecked) absl::StrAppend(&out, "  ", EscapeForTerminal(line), "\n");
    out += '\n';
  }
  if (any_batch) {
    out +=
        "median: wall time of one batch of n tasks. 95% CI: distribution-free confidence\n"
        "interval of the median (order statistics); ±%: its half-width, \"-\" below 6\n"
        "samples (the CI shown is then [min, max]). n: samples kept (\"97 of 1000\": the\n"
        "others were dropped as a transient warm-up phase). ratio: median / fastest\n"
        "median of the group. CPU/rep, allocs/rep: CPU time and operator new calls per\n"
        "repetition, counted over the timed repetitions only. threads: worker threads\n"
        "used (0: the caller's; \"4 of 100\": fewer than requested; \"6 (4 req.)\": more\n"
        "than requested; \"req.\": nothing ran).\n"
        "(rep cap) / (time cap): the CI missed its target before that cap. [throttled]:\n"
        "the CPU was throttled during the case. [unstable]: the samples still drifted\n"
        "(a transient phase) when the case's budget ran out. [contended N%]: other work\n"
        "took N% of the machine's CPU while the case ran (also when measured again): its\n"
        "verdicts stay undecided unless the gap is beyond what that work can explain.\n"
        "[harness N%]: a batch of\n"
        "empty tasks through the same strategy (timing, bookkeeping, dispatch) takes N%\n"
        "of the median (> 5%): the median is not all the task's own work. [harness >=\n"
        "median]: the empty batch alone takes as long as the real one or longer: the\n"
        "task's own work is below what this strategy's dispatch can resolve.\n";
  }
  if (std::any_of(report.results().begin(), report.results().end(),
                  [](const CaseResult& r) { return engine::IsPartialResult(r); })) {
    out +=
        "[partial]: the run was interrupted or cancelled before the case finished; its\n"
        "numbers cover the rounds it finished (the message says how many).\n";
  }
  if (any_fanout_or_load) {
    out +=
        "threads (fan-out, load): the threads that carried the requests (\"4 of 100\":\n"
        "fewer than requested; \"7 (5 req.)\": more, e.g. a thread-per-request\n"
        "strategy's peak or a server model's own threads; \"req.\": nothing ran).\n";
  }
  if (any_energy) {
    out +=
        "J/task: energy per task net of the idle baseline measured before each process\n"
        "(gross minus idle power x the same time), the mean over processes, ±: the 95%\n"
        "interval over them (t); W: mean power while the timed repetitions ran (gross).\n"
        "unresolved: below what the energy source resolves, so no number. [charging]: a\n"
        "battery sample was taken while charging: not the device's consumption.\n";
  }
  if (any_processes) {
    out +=
        "Several processes per case (measurement.processes): the 95% CI covers the\n"
        "variation between processes too (hierarchical bootstrap); btw: the between-\n"
        "process share of the variance (ANOVA variance components); next ±%: where the\n"
        "next invocation's median should fall (95% prediction interval over as many\n"
        "processes, from their spread here, widened by how far the run's rounds moved\n"
        "every strategy's medians together: the next invocation runs at another moment).\n";
  }
  return out;
}

}  // namespace fleetmark::report
