#include "tests/bench/sim_agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/uuid.h"
#include "engine/plan/plan.h"

namespace fleetmark::bench {

SimAgent::SimAgent(SimFleet* fleet, int index, std::string name, std::map<std::string, std::string> labels)
    : fleet_(fleet), index_(index), name_(std::move(name)), labels_(std::move(labels)) {}

void SimAgent::Start(const std::string& target, const std::string& token) {
  grpc::ChannelArguments args;
  // Each simulated agent gets its own subchannel and TCP connection, like a device.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 60000);
  channel_ = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::AgentService::NewStub(channel_);
  stub_->async()->Connect(&context_, this);

  v1::AgentMessage hello;
  v1::Hello* h = hello.mutable_hello();
  h->set_protocol_version(v1::PROTOCOL_VERSION_1);
  h->set_agent_name(name_);
  h->set_enrollment_token(token);
  h->set_engine_version("sim");
  v1::HostInfo* host = h->mutable_host();
  host->set_hostname(name_);
  host->set_arch(index_ % 2 == 0 ? "x86_64" : "aarch64");
  host->set_cpu_model("simulated");
  host->set_logical_cpus(8);
  host->set_physical_cores(4);
  for (const auto& [k, v] : labels_) (*h->mutable_labels())[k] = v;
  for (const char* s : {"direct", "fixed_pool"}) h->add_strategies(s);
  h->add_workloads("arithmetic");
  h->add_scenarios("batch");
  if (fleet_->protocol().batched_acks) h->add_capabilities(v1::CAPABILITY_RESULT_ACKS);
  Send(std::move(hello));
  StartRead(&in_);
  StartCall();
}

void SimAgent::Send(v1::AgentMessage message) {
  bool start = false;
  {
    absl::MutexLock lock(&mu_);
    if (write_failed_) return;
    queue_.push_back(std::move(message));
    if (!writing_) start = PrepareNextLocked();
  }
  // Outside the lock: a reaction may run inline. Only the writer touches out_.
  if (start) StartWrite(&out_);
}

bool SimAgent::PrepareNextLocked() {
  if (queue_.empty()) {
    writing_ = false;
    return false;
  }
  writing_ = true;
  out_ = std::move(queue_.front());
  queue_.pop_front();
  if (out_.has_result()) {
    int64_t expected = 0;
    fleet_->first_result_ns.compare_exchange_strong(expected, absl::ToUnixNanos(absl::Now()));
    fleet_->results_sent.fetch_add(1);
  }
  return true;
}

void SimAgent::OnWriteDone(bool ok) {
  bool start = false;
  {
    absl::MutexLock lock(&mu_);
    if (!ok) {
      write_failed_ = true;
      writing_ = false;
      queue_.clear();
      return;
    }
    start = PrepareNextLocked();
  }
  if (start) StartWrite(&out_);
}

void SimAgent::SendHeartbeat() {
  if (!welcomed_.load() || done_.load()) return;
  v1::AgentMessage message;
  message.mutable_heartbeat()->set_unix_time_ns(absl::ToUnixNanos(absl::Now()));
  message.mutable_heartbeat()->set_rss_bytes(8u << 20);
  Send(std::move(message));
}

void SimAgent::OnAssignment(const v1::JobAssignment& job) {
  const JobPlan plan = fleet_->job_plan();
  const bool hold = plan.results_per_job == 0 && plan.hold_finish;
  {
    absl::MutexLock lock(&mu_);
    assignment_time_ = absl::Now();
    job_id_ = job.job_id();
    unacked_ = plan.results_per_job;
    // Held before it is counted: the bench calls FinishHeldJobs once every assignment is
    // counted, and a job held after that was never finished (its run never ended; seen
    // under load, a fan-out round then waited 300 s).
    if (hold) held_job_id_ = job.job_id();
  }
  fleet_->assignments.fetch_add(1);
  v1::AgentMessage accepted;
  accepted.mutable_job_accepted()->set_job_id(job.job_id());
  Send(std::move(accepted));
  // Results of the job's own cases, in turn (a run accepts results of its cases only).
  const std::vector<v1::CaseSpec> cases =
      plan.results_per_job > 0 ? engine::ExpandCases(job.plan(), job.quick()) : std::vector<v1::CaseSpec>{};
  for (int i = 0; i < plan.results_per_job; ++i) {
    v1::AgentMessage message;
    *message.mutable_result() =
        SyntheticResult(agent::NewUuidV4().value_or(""), job.run_id(), job.job_id(), i, plan.samples_per_result,
                        cases.empty() ? nullptr : &cases[static_cast<size_t>(i) % cases.size()]);
    Send(std::move(message));
  }
  if (plan.results_per_job == 0 && !hold) SendFinished(job.job_id());
}

void SimAgent::SendFinished(const std::string& job_id) {
  v1::AgentMessage finished;
  finished.mutable_job_finished()->set_job_id(job_id);
  finished.mutable_job_finished()->set_ok(true);
  Send(std::move(finished));
  fleet_->jobs_finished.fetch_add(1);
}

void SimAgent::FinishHeldJob() {
  std::string job_id;
  {
    absl::MutexLock lock(&mu_);
    job_id.swap(held_job_id_);
  }
  if (!job_id.empty()) SendFinished(job_id);
}

void SimAgent::OnReadDone(bool ok) {
  if (!ok) return;  // OnDone follows
  switch (in_.msg_case()) {
    case v1::CoordinatorMessage::kWelcome:
      welcomed_.store(true);
      break;
    case v1::CoordinatorMessage::kRefusal:
      if (fleet_->refusals.fetch_add(1) == 0) fleet_->set_first_refusal(in_.refusal().reason());
      break;
    case v1::CoordinatorMessage::kAssignment:
      OnAssignment(in_.assignment());
      break;
    case v1::CoordinatorMessage::kAck:
      fleet_->ack_messages.fetch_add(1);
      OnAck(in_.ack());
      break;
    case v1::CoordinatorMessage::kAcks:
      fleet_->ack_messages.fetch_add(1);
      for (const v1::ResultAck& ack : in_.acks().acks()) OnAck(ack);
      break;
    default:
      break;
  }
  StartRead(&in_);
}

void SimAgent::OnAck(const v1::ResultAck& ack) {
  fleet_->acks.fetch_add(1);
  if (ack.rejected()) fleet_->rejected_acks.fetch_add(1);
  fleet_->last_ack_ns.store(absl::ToUnixNanos(absl::Now()));
  std::string finish_job;
  {
    absl::MutexLock lock(&mu_);
    if (unacked_ > 0 && --unacked_ == 0) finish_job = job_id_;
  }
  if (!finish_job.empty()) SendFinished(finish_job);
}

void SimAgent::OnDone(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    status_ = status;
  }
  fleet_->RecordEnd(status);
  done_.store(true);
}

absl::Time SimAgent::assignment_time() const {
  absl::MutexLock lock(&mu_);
  return assignment_time_;
}

grpc::Status SimAgent::final_status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

SimFleet::~SimFleet() {
  StopAll();
  WaitAllDone(absl::Seconds(30));
}

void SimFleet::Add(int count, const std::string& prefix, const std::map<std::string, std::string>& labels) {
  for (int i = 0; i < count; ++i) {
    SimAgent* agent = nullptr;
    {
      absl::MutexLock lock(&agents_mu_);
      const int index = static_cast<int>(agents_.size());
      agents_.push_back(
          std::make_unique<SimAgent>(this, index, absl::StrCat(prefix, "-", absl::Dec(i, absl::kZeroPad5)), labels));
      agent = agents_.back().get();
    }
    agent->Start(target_, token_);
  }
}

size_t SimFleet::size() const {
  absl::MutexLock lock(&agents_mu_);
  return agents_.size();
}

SimAgent* SimFleet::agent(size_t i) {
  absl::MutexLock lock(&agents_mu_);
  return agents_[i].get();
}

std::vector<SimAgent*> SimFleet::Snapshot() const {
  absl::MutexLock lock(&agents_mu_);
  std::vector<SimAgent*> agents;
  agents.reserve(agents_.size());
  for (const auto& a : agents_) agents.push_back(a.get());
  return agents;
}

size_t SimFleet::welcomed() const {
  size_t n = 0;
  for (const SimAgent* a : Snapshot()) n += a->welcomed();
  return n;
}

size_t SimFleet::open_streams() const {
  size_t n = 0;
  for (const SimAgent* a : Snapshot()) n += a->welcomed() && !a->done();
  return n;
}

size_t SimFleet::unwelcomed_ended() const {
  size_t n = 0;
  for (const SimAgent* a : Snapshot()) n += !a->welcomed() && a->done();
  return n;
}

void SimFleet::RecordEnd(const grpc::Status& status) {
  if (stopping_.load()) return;
  absl::MutexLock lock(&mu_);
  auto& [count, first] = ends_[static_cast<int>(status.error_code())];
  if (count++ == 0) first = status.error_message();
}

std::string SimFleet::EndSummary() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> parts;
  for (const auto& [code, end] : ends_) {
    parts.push_back(absl::StrCat("code ", code, " x", end.first, " (first: ", end.second, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

void SimFleet::StartHeartbeats(absl::Duration period) {
  heartbeats_ = std::thread([this, period] { HeartbeatLoop(period); });
}

void SimFleet::HeartbeatLoop(absl::Duration period) {
  while (!stop_heartbeats_.load()) {
    const std::vector<SimAgent*> agents = Snapshot();
    const absl::Time start = absl::Now();
    const absl::Duration step = period / static_cast<double>(std::max<size_t>(1, agents.size()));
    for (size_t i = 0; i < agents.size() && !stop_heartbeats_.load(); ++i) {
      agents[i]->SendHeartbeat();
      const absl::Duration wait = start + step * static_cast<double>(i + 1) - absl::Now();
      if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
    }
    const absl::Duration rest = start + period - absl::Now();
    if (agents.empty() && rest > absl::ZeroDuration()) absl::SleepFor(rest);
  }
}

void SimFleet::FinishHeldJobs() {
  for (SimAgent* a : Snapshot()) a->FinishHeldJob();
}

void SimFleet::StopAll() {
  stopping_.store(true);
  stop_heartbeats_.store(true);
  if (heartbeats_.joinable()) heartbeats_.join();
  for (SimAgent* a : Snapshot()) a->Stop();
}

bool SimFleet::WaitAllDone(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  for (SimAgent* a : Snapshot()) {
    while (!a->done()) {
      if (absl::Now() >= deadline) return false;
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  return true;
}

v1::CaseResult SyntheticResult(const std::string& result_id, const std::string& run_id, const std::string& job_id,
                               int index, int samples, const v1::CaseSpec* case_spec) {
  v1::CaseResult r;
  r.set_result_id(result_id);
  r.set_run_id(run_id);
  r.set_job_id(job_id);
  v1::CaseSpec* spec = r.mutable_spec();
  if (case_spec != nullptr) {
    *spec = *case_spec;
  } else {
    spec->mutable_strategy()->set_name(index % 2 == 0 ? "direct" : "fixed_pool");
    spec->mutable_strategy()->set_threads(index % 2 == 0 ? 0 : 4);
    spec->set_workload("arithmetic");
    spec->set_io_mode("blocking");
    spec->set_scenario("batch");
    spec->set_placement("any");
    spec->mutable_batch()->set_tasks(100);
    spec->set_case_id(absl::StrCat("batch/arithmetic/blocking/sim_", index, "/any"));
  }
  r.set_status(v1::CASE_STATUS_OK);
  r.set_stop_reason(v1::STOP_REASON_CI_TARGET);
  for (int i = 0; i < samples; ++i) r.add_samples_ns(100000 + (i * 7919) % 5000);
  v1::Statistics* s = r.mutable_stats();
  s->set_count(samples);
  s->set_min_ns(100000);
  s->set_median_ns(102500);
  s->set_max_ns(104999);
  s->set_mean_ns(102480);
  s->set_stddev_ns(1440);
  s->set_mad_ns(1250);
  s->set_ci_low_ns(102100);
  s->set_ci_high_ns(102900);
  s->set_ci_half_width_percent(0.39);
  v1::Counters* c = r.mutable_counters();
  c->set_cpu_user_seconds(0.5);
  c->set_cpu_system_seconds(0.01);
  c->set_repetitions(samples);
  c->set_allocations(1200);
  c->set_allocated_bytes(64000);
  c->set_peak_threads(5);
  r.set_threads_used(index % 2 == 0 ? 1 : 4);
  r.set_peak_in_flight(4);
  const int64_t now = absl::ToUnixNanos(absl::Now());
  r.set_started_unix_ns(now - 1000000000);
  r.set_finished_unix_ns(now);
  r.set_engine_version("sim");
  return r;
}

}  // namespace fleetmark::bench
