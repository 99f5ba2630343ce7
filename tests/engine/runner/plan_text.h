// Runner tests' one way to write a plan: protobuf text format, parsed or the test fails.
//
//   v1::Plan plan = PlanFrom(R"pb(matrix { ... })pb");
//
// Test-only; thread-safe (no state).
#pragma once

#include <string>

#include "fleetmark/v1/plan.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {

// `text` parsed as a v1::Plan; a parse error fails the calling test (EXPECT) and the
// partial plan is returned.
inline v1::Plan PlanFrom(const std::string& text) {
  v1::Plan plan;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &plan)) << text;
  return plan;
}

}  // namespace fleetmark::engine
