// results_verdicts: the verdict of every point of a results JSON file, by the one
// verdict rule (engine/measure/verdict.h) — for tests/bench/verdict_repro.py. Reads
// `fleetmark run --format json` output (a file or -), groups the OK batch results by
// point (CasePointKey, engine/plan/case_group.h), and prints one JSON object per line:
//   {"point": "...", "kind": "decided", "leader": "direct", "ratio": 4.3, "low": 3.9,
//    "high": 4.8, "contenders": 4, "reason": "...", "others": [{"name", "pairs", "ratio",
//    "low", "high", "out", "within_margin"}, ...]}
// with the margin and prior from DeviceSpread over every point of the file. Exit 2 on
// unreadable or malformed input.
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/measure/contention_evidence.h"
#include "engine/measure/verdict.h"
#include "engine/plan/case_group.h"
#include "engine/report/json.h"
#include "nlohmann/json.hpp"

int main(int argc, char** argv) {
  using namespace fleetmark;
  if (argc != 2) {
    std::cerr << "usage: results_verdicts RESULTS.json|-\n";
    return 2;
  }
  std::stringstream text;
  if (std::string(argv[1]) == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(argv[1]);
    if (!in) {
      std::cerr << "results_verdicts: cannot read " << argv[1] << "\n";
      return 2;
    }
    text << in.rdbuf();
  }
  absl::StatusOr<v1::ResultsDocument> doc = report::ParseResultsJson(text.str());
  if (!doc.ok()) {
    std::cerr << "results_verdicts: " << doc.status().message() << "\n";
    return 2;
  }
  for (const v1::ResultsDevice& device : doc->devices()) {
    std::map<std::string, std::vector<engine::Contender>> points;
    for (const v1::CaseResult& r : device.results()) {
      if (r.spec().scenario() != "batch" || r.status() != v1::CASE_STATUS_OK || r.process_medians_ns_size() == 0) {
        continue;
      }
      engine::Contender c;
      c.name = r.spec().strategy().label();
      c.process_medians_ns.assign(r.process_medians_ns().begin(), r.process_medians_ns().end());
      for (int i = 0; i < r.process_medians_ns_size(); ++i) {
        c.rounds.push_back(i < r.process_rounds_size() ? r.process_rounds(i) : static_cast<uint32_t>(i + 1));
      }
      engine::SetContention(r, c);
      points[engine::CasePointKey(r.spec())].push_back(std::move(c));
    }
    std::vector<std::vector<engine::Contender>> groups;
    for (const auto& [point, contenders] : points) groups.push_back(contenders);
    const engine::ResidualSpread spread = engine::DeviceSpread(groups);
    engine::VerdictOptions options;
    options.spread = spread.prior_sigma;
    options.spread_dof = spread.prior_dof;
    for (const auto& [point, contenders] : points) {
      const engine::GroupVerdict v = engine::DecideGroup(contenders, options);
      nlohmann::json line = {{"device", device.agent()},
                             {"point", point},
                             {"kind", engine::VerdictKindName(v.kind)},
                             {"leader", v.leader},
                             {"contenders", contenders.size()},
                             {"margin", v.margin},
                             {"reason", v.reason}};
      if (!v.others.empty()) {
        line["runner_up"] = v.others.front().name;
        line["ratio"] = v.others.front().ratio;
        line["low"] = v.others.front().low;
        line["high"] = std::isfinite(v.others.front().high) ? nlohmann::json(v.others.front().high) : nlohmann::json();
      }
      nlohmann::json others = nlohmann::json::array();
      for (const engine::PairedRatio& o : v.others) {
        others.push_back({{"name", o.name},
                          {"pairs", o.pairs},
                          {"ratio", o.ratio},
                          {"low", o.low},
                          {"high", std::isfinite(o.high) ? nlohmann::json(o.high) : nlohmann::json()},
                          {"out", o.out},
                          {"within_margin", o.within_margin}});
      }
      line["others"] = std::move(others);
      std::cout << line.dump() << "\n";
    }
  }
  return 0;
}
