#include "coordinator/http/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/report/case_names.h"
#include "engine/report/strategy_map.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::http {
namespace {

// A device's name in a cell's verdict: its letter on the page (A, B, ...).
std::string Letter(size_t d) { return d < 26 ? std::string(1, static_cast<char>('A' + d)) : absl::StrCat("#", d + 1); }

bool IsTimed(const fleetmark::v1::CaseResult& r) {
  return r.status() == fleetmark::v1::CASE_STATUS_OK && r.stats().count() > 0 && std::isfinite(r.stats().median_ns()) &&
         r.stats().median_ns() > 0;
}

Ratio RatioOf(const CellValue& a, const CellValue& x) {
  const double inf = std::numeric_limits<double>::infinity();
  Ratio r;
  r.ratio = a.median_ns / x.median_ns;
  r.low = x.ci_high_ns > 0 ? a.ci_low_ns / x.ci_high_ns : 0;
  r.high = x.ci_low_ns > 0 ? a.ci_high_ns / x.ci_low_ns : inf;
  r.no_difference = r.low <= 1 && 1 <= r.high;
  return r;
}

// Geometric mean of ratios and of their bounds.
std::optional<Ratio> GeoMean(const std::vector<Ratio>& ratios) {
  if (ratios.empty()) return std::nullopt;
  double log_ratio = 0, log_low = 0, log_high = 0;
  for (const Ratio& r : ratios) {
    log_ratio += std::log(r.ratio);
    log_low += std::log(std::max(r.low, 1e-300));
    log_high += std::log(std::min(r.high, 1e300));
  }
  const double n = static_cast<double>(ratios.size());
  Ratio g;
  g.ratio = std::exp(log_ratio / n);
  g.low = std::exp(log_low / n);
  g.high = std::exp(log_high / n);
  g.no_difference = g.low <= 1 && 1 <= g.high;
  return g;
}

}  // namespace

std::string WorkloadKey(const fleetmark::v1::CaseSpec& spec) {
  const std::string workload = report::WorkloadText(spec);
  return absl::StrCat(spec.scenario(), "/", workload.empty() ? "-" : workload, "/",
                      spec.io_mode().empty() ? "-" : spec.io_mode(), "/",
                      spec.placement().empty() ? "any" : spec.placement());
}

std::string WorkloadLabel(const fleetmark::v1::CaseSpec& spec) {
  const std::string workload = report::WorkloadText(spec);
  std::string label = workload.empty() ? spec.scenario() : workload;
  if (!workload.empty() && !engine::IsBatch(spec)) label = absl::StrCat(spec.scenario(), " · ", label);
  if (!spec.io_mode().empty() && spec.io_mode() != "blocking") absl::StrAppend(&label, " (", spec.io_mode(), ")");
  if (!spec.placement().empty() && spec.placement() != "any") absl::StrAppend(&label, " [", spec.placement(), "]");
  return label;
}

std::string StrategyLabel(const fleetmark::v1::CaseSpec& spec) {
  return spec.strategy().label().empty() ? spec.strategy().name() : spec.strategy().label();
}

Comparison CompareDevices(const std::vector<DeviceResults>& devices, const report::MapOptions& options) {
  const size_t n = devices.size();
  Comparison out;
  std::map<std::string, size_t> column_index;
  // (strategy, workload key) -> cell index.
  std::map<std::pair<std::string, std::string>, size_t> cell_index;
  for (size_t d = 0; d < n; ++d) {
    for (const store::WebResult& wr : devices[d].results) {
      const fleetmark::v1::CaseResult& r = wr.result;
      if (!IsTimed(r)) continue;
      const std::string key = WorkloadKey(r.spec());
      if (column_index.emplace(key, out.workloads.size()).second) {
        out.workloads.push_back({key, WorkloadLabel(r.spec())});
      }
      const std::string strategy = StrategyLabel(r.spec());
      auto [it, inserted] = cell_index.emplace(std::make_pair(strategy, key), out.cells.size());
      if (inserted) {
        Cell& cell = out.cells.emplace_back();
        cell.strategy = strategy;
        cell.workload = key;
        cell.values.resize(n);
        cell.ratios.resize(n);
      }
      std::optional<CellValue>& slot = out.cells[it->second].values[d];
      // A repeated case in one run: keep the tighter interval.
      const double width = r.stats().ci_high_ns() - r.stats().ci_low_ns();
      if (slot && slot->ci_high_ns - slot->ci_low_ns <= width) continue;
      slot.emplace();
      slot->result_id = r.result_id();
      slot->median_ns = r.stats().median_ns();
      slot->ci_low_ns = r.stats().ci_low_ns();
      slot->ci_high_ns = r.stats().ci_high_ns();
      const report::MapEntry entry = report::EntryOf(r);
      slot->process_medians_ns = entry.process_medians_ns;
      slot->contended = entry.contended;
      slot->other_cpu_share = entry.other_cpu_share;
      slot->episodes = entry.episodes;
      slot->wakeup_delay_ns = entry.wakeup_delay_ns;
      slot->preemption_delay_ns = entry.preemption_delay_ns;
    }
  }

  // Normalise to each device's fastest strategy per workload.
  for (size_t d = 0; d < n; ++d) {
    std::map<std::string, double> fastest;
    for (const Cell& cell : out.cells) {
      if (!cell.values[d]) continue;
      auto [it, inserted] = fastest.emplace(cell.workload, cell.values[d]->median_ns);
      if (!inserted) it->second = std::min(it->second, cell.values[d]->median_ns);
    }
    for (Cell& cell : out.cells) {
      if (!cell.values[d]) continue;
      const double best = fastest[cell.workload];
      cell.values[d]->normalized = cell.values[d]->median_ns / best;
      cell.values[d]->fastest = cell.values[d]->median_ns == best;
    }
  }

  // Winner, ratios. The spread of every device's results, once.
  std::vector<const fleetmark::v1::CaseResult*> every_result;
  for (const DeviceResults& d : devices) {
    for (const store::WebResult& wr : d.results) every_result.push_back(&wr.result);
  }
  const report::MapOptions decide = report::WithSpreadOf(options, every_result);
  std::map<std::string, std::vector<std::vector<Ratio>>> per_column;
  std::vector<std::vector<Ratio>> all(n);
  for (Cell& cell : out.cells) {
    std::vector<size_t> present;
    for (size_t d = 0; d < n; ++d) {
      if (cell.values[d]) present.push_back(d);
    }
    if (present.size() >= 2) {
      // The devices as the contenders of the one verdict rule, a device's letter standing
      // for the strategy (process i of each is round i + 1).
      report::MapPoint point;
      for (size_t d : present) {
        const CellValue& v = *cell.values[d];
        report::MapEntry e;
        e.strategy = Letter(d);
        e.median_ns = v.median_ns;
        e.process_medians_ns = v.process_medians_ns;
        e.contended = v.contended;
        e.other_cpu_share = v.other_cpu_share;
        e.episodes = v.episodes;
        e.wakeup_delay_ns = v.wakeup_delay_ns;
        e.preemption_delay_ns = v.preemption_delay_ns;
        for (size_t i = 0; i < e.process_medians_ns.size(); ++i) e.rounds.push_back(static_cast<uint32_t>(i + 1));
        point.ranked.push_back(std::move(e));
      }
      report::DecidePoint(point, decide);
      for (size_t d : present) {
        if (Letter(d) == point.winner()) cell.winner = static_cast<int>(d);
      }
      cell.no_difference = point.tie;
      cell.verdict = engine::VerdictKindName(point.kind);
      cell.reason = point.reason;
    }
    auto& column = per_column[cell.workload];
    column.resize(n);
    for (size_t d = 1; d < n; ++d) {
      if (!cell.values[0] || !cell.values[d]) continue;
      cell.ratios[d] = RatioOf(*cell.values[0], *cell.values[d]);
      column[d].push_back(*cell.ratios[d]);
      all[d].push_back(*cell.ratios[d]);
    }
  }
  for (const WorkloadColumn& w : out.workloads) {
    std::vector<std::optional<Ratio>> row(n);
    auto it = per_column.find(w.key);
    for (size_t d = 1; d < n && it != per_column.end(); ++d) row[d] = GeoMean(it->second[d]);
    out.geomean.emplace_back(w.key, std::move(row));
  }
  out.overall.resize(n);
  for (size_t d = 1; d < n; ++d) out.overall[d] = GeoMean(all[d]);

  // Strategies by geometric mean of normalised time over every device and workload.
  std::map<std::string, std::pair<double, int>> score;
  for (const Cell& cell : out.cells) {
    for (const auto& v : cell.values) {
      if (!v) continue;
      auto& s = score[cell.strategy];
      s.first += std::log(v->normalized);
      s.second += 1;
    }
  }
  for (const auto& [name, s] : score) out.strategies.push_back(name);
  std::stable_sort(out.strategies.begin(), out.strategies.end(), [&](const std::string& a, const std::string& b) {
    const auto& sa = score[a];
    const auto& sb = score[b];
    return sa.first / sa.second < sb.first / sb.second;
  });
  return out;
}

}  // namespace fleetmark::http
