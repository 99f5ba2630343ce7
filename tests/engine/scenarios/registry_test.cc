// The scenario registry against the messages and RunScenarioCase, for every entry: a
// new scenario whose row lies (a name that is not its oneof field, a result part it
// does not fill, a runner missing) fails here (engine/scenarios/registry.h).
#include "engine/scenarios/registry.h"

#include <set>
#include <string>

#include "engine/scenarios/scenario.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;

// The names of the fields of `message`'s oneof `oneof`.
std::set<std::string> OneofFields(const google::protobuf::Descriptor* message, const char* oneof) {
  const google::protobuf::OneofDescriptor* o = message->FindOneofByName(oneof);
  EXPECT_NE(o, nullptr) << message->full_name() << " has no oneof " << oneof;
  std::set<std::string> names;
  if (o == nullptr) return names;
  for (int i = 0; i < o->field_count(); ++i) names.insert(std::string(o->field(i)->name()));
  return names;
}

class ScenarioRegistryTest : public ::testing::TestWithParam<const ScenarioTraits*> {};

TEST_P(ScenarioRegistryTest, RoundTripsByName) {
  const ScenarioTraits& s = *GetParam();
  EXPECT_EQ(FindScenario(s.name), &s);
  absl::StatusOr<const ScenarioTraits*> looked_up = LookupScenario(s.name);
  ASSERT_TRUE(looked_up.ok()) << looked_up.status();
  EXPECT_EQ(*looked_up, &s);
  EXPECT_EQ(FindScenario(s.matrix_case), &s);
  EXPECT_EQ(ScenarioOrDefault(s.name), s.name);
  EXPECT_FALSE(s.description.empty());
}

TEST_P(ScenarioRegistryTest, MatrixCaseIsTheMatrixFieldOfItsName) {
  const ScenarioTraits& s = *GetParam();
  v1::Matrix m;
  const google::protobuf::FieldDescriptor* field = m.GetDescriptor()->FindFieldByName(std::string(s.name));
  ASSERT_NE(field, nullptr) << "Matrix has no field " << s.name;
  m.GetReflection()->MutableMessage(&m, field);  // sets the oneof to this field
  EXPECT_EQ(m.scenario_case(), s.matrix_case);
  // CaseSpec carries the same parameters under the same name.
  EXPECT_TRUE(OneofFields(v1::CaseSpec::descriptor(), "params").count(std::string(s.name)) == 1) << s.name;
}

TEST_P(ScenarioRegistryTest, ResultCaseIsTheResultFieldOfItsName) {
  const ScenarioTraits& s = *GetParam();
  const std::set<std::string> parts = OneofFields(v1::CaseResult::descriptor(), "scenario_result");
  if (s.result_case == v1::CaseResult::SCENARIO_RESULT_NOT_SET) {
    EXPECT_EQ(parts.count(std::string(s.name)), 0u) << s.name << " has a result part but its row says none";
    EXPECT_TRUE(s.is_batch) << s.name << ": only batch is measured by its timing statistics alone";
    return;
  }
  v1::CaseResult r;
  const google::protobuf::FieldDescriptor* field = r.GetDescriptor()->FindFieldByName(std::string(s.name));
  ASSERT_NE(field, nullptr) << "CaseResult has no field " << s.name;
  r.GetReflection()->MutableMessage(&r, field);
  EXPECT_EQ(r.scenario_result_case(), s.result_case);
}

TEST_P(ScenarioRegistryTest, RunScenarioCaseRunsExactlyTheNonBatchScenarios) {
  const ScenarioTraits& s = *GetParam();
  EXPECT_EQ(IsBatch(s.name), s.is_batch);
  // Running a non-batch case would spawn child processes; the refusal of a batch spec
  // lists what RunScenarioCase runs instead (scenario.cc's kRunners, held to the
  // registry's order by a static_assert).
  v1::CaseSpec batch;
  batch.set_scenario(std::string(kDefaultScenario.name));
  absl::StatusOr<v1::CaseResult> refused = RunScenarioCase(batch, ScenarioContext{});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(refused.status().message());
  const std::string runs = message.substr(0, message.find(", got"));
  EXPECT_EQ(runs.find(std::string(s.name)) != std::string::npos, !s.is_batch) << message;
}

INSTANTIATE_TEST_SUITE_P(AllScenarios, ScenarioRegistryTest, ::testing::ValuesIn([] {
                           std::vector<const ScenarioTraits*> all;
                           for (const ScenarioTraits& s : kScenarios) all.push_back(&s);
                           return all;
                         }()),
                         [](const ::testing::TestParamInfo<const ScenarioTraits*>& info) {
                           return std::string(info.param->name);
                         });

TEST(ScenarioRegistryTest, EveryMatrixScenarioIsRegistered) {
  const std::set<std::string> fields = OneofFields(v1::Matrix::descriptor(), "scenario");
  std::set<std::string> names;
  for (const ScenarioTraits& s : kScenarios) names.emplace(s.name);
  EXPECT_EQ(fields, names);
  EXPECT_EQ(FindScenario(v1::Matrix::SCENARIO_NOT_SET), nullptr);
}

TEST(ScenarioRegistryTest, TraitsOfTheFourScenarios) {
  const ScenarioTraits* batch = FindScenario("batch");
  ASSERT_NE(batch, nullptr);
  EXPECT_TRUE(batch->is_batch);
  EXPECT_TRUE(batch->needs_workload);
  EXPECT_TRUE(batch->refuses_workload.empty());
  for (const char* name : {"memory", "fanout", "load"}) {
    const ScenarioTraits* s = FindScenario(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_FALSE(s->is_batch) << name;
    EXPECT_FALSE(s->needs_workload) << name;
  }
  EXPECT_TRUE(FindScenario("memory")->refuses_workload.empty());  // accepted as a name (registry.h)
  EXPECT_FALSE(FindScenario("fanout")->refuses_workload.empty());
  EXPECT_FALSE(FindScenario("load")->refuses_workload.empty());
  EXPECT_EQ(ScenarioNames(), (std::vector<std::string>{"batch", "memory", "fanout", "load"}));
}

TEST(ScenarioRegistryTest, EmptyNameIsTheDefaultBatchAndUnknownIsNoBatch) {
  EXPECT_EQ(ScenarioOrDefault(""), "batch");
  EXPECT_TRUE(IsBatch(""));
  EXPECT_TRUE(IsBatch(v1::CaseSpec{}));
  EXPECT_FALSE(IsBatch("bacth"));
  EXPECT_FALSE(IsBatch("BATCH"));  // names are exact, as in every stored row
  EXPECT_EQ(FindScenario(""), nullptr);
}

TEST(ScenarioRegistryTest, UnknownNameErrorNamesAllowedValuesAndTheClosest) {
  absl::StatusOr<const ScenarioTraits*> s = LookupScenario("bacth");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(s.status().message());
  EXPECT_THAT(message, HasSubstr("scenario: one of batch, memory, fanout, load"));
  EXPECT_THAT(message, HasSubstr("did you mean \"batch\""));
  absl::StatusOr<const ScenarioTraits*> empty = LookupScenario("");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("one of batch, memory, fanout, load"));
}

}  // namespace
}  // namespace fleetmark::engine
