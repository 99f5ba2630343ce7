// Status propagation macros (Abseil 20220623 has no ABSL_RETURN_IF_ERROR).
//
//   FLEETMARK_RETURN_IF_ERROR(DoThing());
//   FLEETMARK_ASSIGN_OR_RETURN(auto plan, LoadPlan(path));
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define FLEETMARK_STATUS_CONCAT_INNER_(a, b) a##b
#define FLEETMARK_STATUS_CONCAT_(a, b) FLEETMARK_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define FLEETMARK_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::absl::Status fleetmark_status_ = (expr);             \
    if (!fleetmark_status_.ok()) return fleetmark_status_; \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, else
// assigns the value to `lhs` (which may be a declaration such as `auto x`).
#define FLEETMARK_ASSIGN_OR_RETURN(lhs, rexpr) \
  FLEETMARK_ASSIGN_OR_RETURN_IMPL_(FLEETMARK_STATUS_CONCAT_(fleetmark_statusor_, __LINE__), lhs, rexpr)

#define FLEETMARK_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                     \
  if (!statusor.ok()) return std::move(statusor).status();     \
  lhs = std::move(statusor).value()
