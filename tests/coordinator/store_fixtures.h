// Fixtures of the store tests (store_conformance_test.cc, store_pg_test.cc, results_store_test.cc): a migrated store
// on a test database, agents, a one-case plan and run, results, and SQL counts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/store.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {

inline std::unique_ptr<Store> OpenStore(const std::string& uri, const std::string& coordinator_id = "c1") {
  StoreOptions options;
  options.connection.uri = uri;
  options.connection.pool_size = 4;
  options.coordinator_id = coordinator_id;
  auto store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return nullptr;
  absl::Status migrated = (*store)->Migrate();
  EXPECT_TRUE(migrated.ok()) << migrated;
  return *std::move(store);
}

inline std::string Agent(Store& store, const std::string& name, const std::string& arch = "x86_64") {
  AgentRegistration reg;
  reg.name = name;
  reg.credential_sha256 = "hash-" + name;
  reg.host.set_arch(arch);
  reg.host.set_logical_cpus(8);
  reg.host.set_physical_cores(4);
  reg.labels["rack"] = "b";
  reg.session_id = "s-" + name;
  auto id = store.RegisterAgent(reg);
  EXPECT_TRUE(id.ok()) << id.status();
  return id.ok() ? *id : "";
}

inline v1::Plan SmallPlan() {
  v1::Plan plan;
  plan.set_name("small");
  v1::Matrix* m = plan.add_matrix();
  m->add_strategies()->set_name("direct");
  m->add_workloads("arithmetic");
  m->mutable_batch()->set_tasks(10);
  return plan;
}

inline NewRun MakeRun(const std::vector<std::string>& agents, uint32_t max_attempts = 3) {
  NewRun run;
  run.plan = SmallPlan();
  run.selector = "";
  run.submitted_by = "test";
  run.agent_ids = agents;
  run.max_attempts = max_attempts;
  run.cases_total = 1;
  return run;
}

inline v1::CaseResult Result(const std::string& result_id, const std::string& job_id, double median) {
  v1::CaseResult r;
  r.set_result_id(result_id);
  r.set_job_id(job_id);
  r.mutable_spec()->mutable_strategy()->set_name("direct");
  r.mutable_spec()->set_workload("arithmetic");
  r.mutable_spec()->set_io_mode("blocking");
  r.mutable_spec()->set_scenario("batch");
  r.mutable_spec()->set_placement("any");
  r.mutable_spec()->set_case_id("batch/arithmetic/blocking/direct/any");
  r.set_status(v1::CASE_STATUS_OK);
  r.mutable_stats()->set_count(3);
  r.mutable_stats()->set_median_ns(median);
  r.add_samples_ns(1);
  r.add_samples_ns(2);
  r.add_samples_ns(3);
  r.set_started_unix_ns(1'700'000'000'000'000'000);
  r.set_finished_unix_ns(1'700'000'001'000'000'000);
  return r;
}

// The schedule "nightly" of SmallPlan on `cron`.
inline v1::Schedule Nightly(const std::string& cron) {
  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron(cron);
  *schedule.mutable_plan() = SmallPlan();
  return schedule;
}

// A run on `agents` (MakeRun) with every agent's job claimed: the run as created and
// each agent's job id.
struct ClaimedRun {
  v1::RunInfo run;
  std::map<std::string, std::string> job_of;  // agent id -> job id
};
inline absl::StatusOr<ClaimedRun> CreateAndClaim(Store& store, const std::vector<std::string>& agents) {
  ClaimedRun created;
  FLEETMARK_ASSIGN_OR_RETURN(created.run, store.CreateRun(MakeRun(agents)));
  FLEETMARK_ASSIGN_OR_RETURN(std::vector<ClaimedJob> claimed, store.ClaimJobs(agents, absl::Seconds(30)));
  for (const ClaimedJob& c : claimed) created.job_of[c.agent_id] = c.assignment.job_id();
  if (created.job_of.size() != agents.size()) {
    return absl::InternalError(absl::StrCat(claimed.size(), " jobs claimed for ", agents.size(), " agents"));
  }
  return created;
}

inline int64_t Count(const std::string& uri, const std::string& sql) {
  pqxx::connection conn(uri);
  pqxx::work txn(conn);
  return txn.exec(sql)[0][0].as<int64_t>();
}

}  // namespace fleetmark::store
