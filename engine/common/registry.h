// The names a plan may use: workloads, io modes. Strategies and scenarios, with their
// traits, are engine/strategies/registry.h's and engine/scenarios/registry.h's.
//
// These tables are the single source of names: the engine's factories implement exactly
// these, and the coordinator validates plans against them without linking the engine's
// strategies (docs/architecture.md, "What runs where").
#pragma once

#include <array>
#include <string_view>

namespace fleetmark::engine {

struct NameInfo {
  std::string_view name;
  std::string_view description;  // one line, for `fleetmark list`
};

inline constexpr std::array<NameInfo, 6> kWorkloads = {{
    {"arithmetic", "(float)i raised to the power (float)i, converted to int"},
    {"collections", "list 0..i-1, map to float +0.3, key by decimal string, square, keep > 5"},
    {"storage", "wait 500 + 10*i us (a small file or database access)"},
    {"network", "wait i ms (a remote call)"},
    {"mixed", "i%5==0 network, else i%3==0 storage, else i%2==0 collections, else arithmetic"},
    {"synthetic", "cpu_ns of calibrated work, a wait_us wait (fixed/uniform/exponential/lognormal), alloc, touch"},
}};

inline constexpr std::array<std::string_view, 2> kIoModes = {"blocking", "suspending"};

}  // namespace fleetmark::engine
