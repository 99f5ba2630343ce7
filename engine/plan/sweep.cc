// SweepValues, SweepPoints, SyntheticParam (sweep.h).
#include "engine/plan/sweep.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"
#include "engine/scenarios/param_rules.h"

namespace fleetmark::engine {

std::vector<uint32_t> SweepValues(const v1::Sweep& sweep) {
  std::vector<uint32_t> out;
  if (sweep.values_size() > 0) {
    const int n = std::min(sweep.values_size(), kMaxSweepPoints);
    out.assign(sweep.values().begin(), sweep.values().begin() + n);
    return out;
  }
  const uint32_t points = std::min<uint32_t>(sweep.points(), kMaxSweepPoints);
  if (points == 0 || sweep.from() == 0) return out;
  if (points == 1) return {sweep.from()};
  const double ratio = static_cast<double>(sweep.to()) / sweep.from();
  for (uint32_t k = 0; k < points; ++k) {
    const double v = sweep.from() * std::pow(ratio, static_cast<double>(k) / (points - 1));
    out.push_back(static_cast<uint32_t>(std::clamp(std::llround(v), 0LL, static_cast<long long>(UINT32_MAX))));
  }
  out.back() = sweep.to();  // exact, whatever pow rounded to
  return out;
}

std::vector<v1::SyntheticParams> SweepPoints(const v1::Matrix& matrix) {
  std::vector<v1::SyntheticParams> points = {matrix.synthetic()};
  for (int s = 0; s < std::min(matrix.sweeps_size(), kMaxSweeps); ++s) {
    const v1::Sweep& sweep = matrix.sweeps(s);
    std::vector<v1::SyntheticParams> next;
    for (const v1::SyntheticParams& base : points) {
      for (uint32_t value : SweepValues(sweep)) {
        v1::SyntheticParams p = base;
        SetSyntheticParam(p, sweep.param(), value);
        next.push_back(std::move(p));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::optional<uint32_t> SyntheticParam(const v1::SyntheticParams& params, std::string_view field) {
  if (const ParamRule<v1::SyntheticParams>* rule = FindSyntheticRule(field)) return (params.*rule->get)();
  return std::nullopt;
}

bool SetSyntheticParam(v1::SyntheticParams& params, std::string_view field, uint32_t value) {
  if (FindSyntheticRule(field) == nullptr) return false;
  // The rules name the proto fields; set the one named by reflection.
  const google::protobuf::FieldDescriptor* descriptor =
      v1::SyntheticParams::descriptor()->FindFieldByName(std::string(field));
  if (descriptor == nullptr) return false;
  params.GetReflection()->SetUInt32(&params, descriptor, value);
  return true;
}

}  // namespace fleetmark::engine
