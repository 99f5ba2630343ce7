// Sweeps of the synthetic workload (plan.proto's Sweep): the values of a swept
// parameter and the points of a matrix (the product of its sweeps). A point's case id
// names it by engine/common/synthetic_text.h: "synthetic[cpu_ns=1000,wait_us=316]".
//
//   for (const v1::SyntheticParams& point : SweepPoints(matrix)) ...
//
// Pure functions over validated plans (invalid input gives best-effort values, at most
// kMaxSweepPoints per sweep, never a crash); safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/synthetic_text.h"  // kSyntheticWorkload, SyntheticWorkloadText
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::engine {

// The sweep's values in order: `values` as written, else `points` values log-spaced
// from `from` to `to` (both included), each rounded to the nearest integer:
// from * (to/from)^(k/(points-1)). At most kMaxSweepPoints.
std::vector<uint32_t> SweepValues(const v1::Sweep& sweep);

// The synthetic parameters at every point of `matrix`: its `synthetic` with each swept
// field replaced, over the product of its sweeps (the first sweep outermost); just
// `synthetic` when it sweeps nothing.
std::vector<v1::SyntheticParams> SweepPoints(const v1::Matrix& matrix);

// Field `field` (a kSyntheticRules name: cpu_ns, wait_us, alloc_bytes, touch_kib) of
// `params`; nullopt for any other name. SetSyntheticParam sets it (false: not a name).
std::optional<uint32_t> SyntheticParam(const v1::SyntheticParams& params, std::string_view field);
bool SetSyntheticParam(v1::SyntheticParams& params, std::string_view field, uint32_t value);

}  // namespace fleetmark::engine
