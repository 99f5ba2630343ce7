// Simulated agents for the fleet benchmark: many agents in one process, each on its own
// AgentService.Connect stream (and its own TCP connection), driven by gRPC's callback
// API (one ClientBidiReactor per agent, no thread per agent).
//
// A simulated agent says hello with the enrollment token, sends heartbeats when the
// fleet's ticker asks, answers each assignment with JobAccepted, then (per the fleet's
// JobPlan) a number of synthetic case results, and JobFinished once they are all acked.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fleetmark/v1/agent.grpc.pb.h"

namespace fleetmark::bench {

// What every simulated agent does with an assignment.
struct JobPlan {
  int results_per_job = 0;       // synthetic results to send before JobFinished
  int samples_per_result = 100;  // raw samples per result (row size)
  // With no results: hold JobFinished until SimFleet::FinishHeldJobs(), as a real job
  // runs for a while after JobAccepted (a finish at once would load the coordinator
  // with job ends while it is still pushing the other assignments of a fan-out).
  bool hold_finish = false;
};

// How simulated agents speak the protocol (fixed when they say hello).
struct SimProtocol {
  bool batched_acks = true;  // announce CAPABILITY_RESULT_ACKS, as fleetmark-agent does
};

class SimFleet;

class SimAgent : public grpc::ClientBidiReactor<v1::AgentMessage, v1::CoordinatorMessage> {
 public:
  SimAgent(SimFleet* fleet, int index, std::string name, std::map<std::string, std::string> labels);

  // Opens the stream and says hello. Call once.
  void Start(const std::string& target, const std::string& token);
  // Queues a message (thread-safe).
  void Send(v1::AgentMessage message);
  void SendHeartbeat();
  // Sends JobFinished for a job held by JobPlan::hold_finish (no-op if none).
  void FinishHeldJob();
  // Cancels the stream.
  void Stop() { context_.TryCancel(); }

  bool welcomed() const { return welcomed_.load(); }
  bool done() const { return done_.load(); }
  const std::string& name() const { return name_; }
  absl::Time assignment_time() const;  // of the last assignment (InfinitePast if none)
  grpc::Status final_status() const;

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void OnAssignment(const v1::JobAssignment& job);
  void OnAck(const v1::ResultAck& ack);
  void SendFinished(const std::string& job_id);
  // Moves the next queued message to out_; false (and not writing) if none.
  bool PrepareNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  SimFleet* const fleet_;
  const int index_;
  const std::string name_;
  const std::map<std::string, std::string> labels_;
  grpc::ClientContext context_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentService::Stub> stub_;
  v1::CoordinatorMessage in_;

  mutable absl::Mutex mu_;
  std::deque<v1::AgentMessage> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  v1::AgentMessage out_;  // owned by the one write in flight
  absl::Time assignment_time_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  std::string held_job_id_ ABSL_GUARDED_BY(mu_);  // JobFinished not sent yet
  int unacked_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);

  std::atomic<bool> welcomed_{false};
  std::atomic<bool> done_{false};
};

// Owns the simulated agents and the counters every phase reads.
class SimFleet {
 public:
  SimFleet(std::string target, std::string token) : target_(std::move(target)), token_(std::move(token)) {}
  ~SimFleet();

  // Creates and starts agents [first, first + count) named "<prefix>-<index>" with
  // `labels`. Returns at once; see welcomed().
  void Add(int count, const std::string& prefix, const std::map<std::string, std::string>& labels);
  void set_job_plan(JobPlan plan) {
    absl::MutexLock lock(&mu_);
    job_plan_ = plan;
  }
  JobPlan job_plan() const {
    absl::MutexLock lock(&mu_);
    return job_plan_;
  }
  // For agents added after the call.
  void set_protocol(SimProtocol protocol) {
    absl::MutexLock lock(&mu_);
    protocol_ = protocol;
  }
  SimProtocol protocol() const {
    absl::MutexLock lock(&mu_);
    return protocol_;
  }

  size_t size() const;
  void set_first_refusal(std::string reason) {
    absl::MutexLock lock(&mu_);
    first_refusal_ = std::move(reason);
  }
  std::string first_refusal() const {
    absl::MutexLock lock(&mu_);
    return first_refusal_;
  }
  SimAgent* agent(size_t i);  // stable for the fleet's life
  size_t welcomed() const;
  size_t open_streams() const;      // welcomed and not done
  size_t unwelcomed_ended() const;  // ended before a Welcome (refused, or failed to connect)
  // Tallies a stream that ended (OnDone) before StopAll, by status code.
  void RecordEnd(const grpc::Status& status);
  // The tally: "code 4 x46 (first: <message>); ..." ("" if none ended).
  std::string EndSummary() const;
  // Sends one heartbeat per welcomed agent, spread over `period`. Blocks for `period`.
  // Starts a thread sending, every `period`, one heartbeat per welcomed agent spread over
  // the period (as real agents do all the time: a coordinator ends streams silent for
  // 3 heartbeat intervals + 5 s). Agents added later are included. Call once.
  void StartHeartbeats(absl::Duration period);
  // Every agent sends JobFinished for its held job (JobPlan::hold_finish).
  void FinishHeldJobs();
  void StopAll();
  // Waits for every stream's OnDone (after StopAll).
  bool WaitAllDone(absl::Duration timeout);

  // Counters (thread-safe).
  std::atomic<uint64_t> results_sent{0};
  std::atomic<uint64_t> acks{0};
  std::atomic<uint64_t> ack_messages{0};  // messages carrying acks (a ResultAcks counts once)
  std::atomic<uint64_t> rejected_acks{0};
  std::atomic<uint64_t> refusals{0};
  std::atomic<int64_t> first_result_ns{0};  // absl::ToUnixNanos of the first result write
  std::atomic<int64_t> last_ack_ns{0};
  std::atomic<uint64_t> assignments{0};
  std::atomic<uint64_t> jobs_finished{0};

 private:
  const std::string target_;
  const std::string token_;
  mutable absl::Mutex mu_;
  JobPlan job_plan_ ABSL_GUARDED_BY(mu_);
  SimProtocol protocol_ ABSL_GUARDED_BY(mu_);
  std::string first_refusal_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::pair<uint64_t, std::string>> ends_ ABSL_GUARDED_BY(mu_);  // code -> count, first message
  std::atomic<bool> stopping_{false};
  // The agents (pointers stable); Add runs while the heartbeat thread reads.
  std::vector<SimAgent*> Snapshot() const;
  void HeartbeatLoop(absl::Duration period);
  mutable absl::Mutex agents_mu_;
  std::vector<std::unique_ptr<SimAgent>> agents_ ABSL_GUARDED_BY(agents_mu_);
  std::atomic<bool> stop_heartbeats_{false};
  std::thread heartbeats_;
};

// A synthetic case result of realistic size (statistics, counters, `samples` samples).
// With `spec` (a case of the job's plan: the coordinator rejects results of cases the
// run does not have) it is that case's; without, a made-up batch case numbered `index`.
v1::CaseResult SyntheticResult(const std::string& result_id, const std::string& run_id, const std::string& job_id,
                               int index, int samples, const v1::CaseSpec* spec = nullptr);

}  // namespace fleetmark::bench
