// The conditions of an environment snapshot as text (what `fleetmark runs show` and the
// web Run page print for the start and end of each case). Protos only, no hwloc: the
// coordinator and the CLI link it through fleetmark_fingerprint.
//
//   std::cout << FormatConditions(result.env_before());
#pragma once

#include <string>
#include <vector>

#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

// The conditions an environment snapshot recorded (what the preflight gates read), one
// line, e.g. "battery 81 % charging, battery 31.5 °C, hottest zone 47.0 °C, load 0.42,
// free memory 6021 MiB, governor schedutil, other CPU 3.1 %, gates failed: ..., gates not checked: ...". Unknown
// values are left out; "no conditions recorded" for an empty snapshot. Pure, thread-safe.
std::string FormatConditions(const v1::EnvSnapshot& env);

// The range of the conditions over many snapshots (e.g. the start and end of every case
// of a run on one device), one line: each known value as "min–max" (or one value when
// they agree), e.g. "load 0.42–2.31, free memory 5900–6021 MiB, hottest zone
// 41.0–47.5 °C, governor schedutil, other CPU ≤ 3.1 %"; then how many snapshots crossed a
// trip point, failed a gate or left a gate unchecked, when any did. A value is taken from the snapshots that
// know it, as FormatConditions reads them; "no conditions recorded" when none knows
// anything. Pure, thread-safe.
std::string FormatConditionsRange(const std::vector<const v1::EnvSnapshot*>& snapshots);

// The gates `snapshots` left unchecked (EnvSnapshot.gates_not_checked: set, but the
// device had no reading to judge them by), each distinct line once, in first-seen
// order, with how many of the snapshots had it, e.g. "temperature: no thermal zone or
// battery gave a plausible reading, max 45 °C not checked (6 of 6)". Empty when every
// gate was checked. Pure, thread-safe.
std::vector<std::string> GatesNotCheckedLines(const std::vector<const v1::EnvSnapshot*>& snapshots);

}  // namespace fleetmark::engine
