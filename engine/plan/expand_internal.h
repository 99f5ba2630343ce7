// Internal to engine/plan: case expansion that remembers where each case came from, so
// validation can name the strategy behind a duplicate case id.
#pragma once

#include <vector>

#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"
#include "google/protobuf/repeated_field.h"

namespace fleetmark::engine {

struct ExpandedCase {
  v1::CaseSpec spec;
  // Where the case came from: its matrix and its element of each list (-1: the list
  // was empty and its default was used).
  int matrix_index = 0;
  int workload_index = -1;
  int io_mode_index = -1;
  int strategy_index = 0;
  int placement_index = -1;
};

// ExpandCases's product over `matrices`, in plan order.
std::vector<ExpandedCase> ExpandMatrices(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices);

// Number of cases ExpandMatrices would return, without building them (saturates at
// SIZE_MAX / guards overflow), so validation can refuse huge plans before expanding.
uint64_t CountCases(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices);

}  // namespace fleetmark::engine
