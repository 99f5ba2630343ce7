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
  int matrix_index = 0;
  int strategy_index = 0;
};

// ExpandCases's product over `matrices`, in plan order.
std::vector<ExpandedCase> ExpandMatrices(
    const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices);

// Number of cases ExpandMatrices would return, without building them (saturates at
// SIZE_MAX / guards overflow), so validation can refuse huge plans before expanding.
uint64_t CountCases(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices);

}  // namespace fleetmark::engine
