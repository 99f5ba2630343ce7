#include "coordinator/service/coordinator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <grpc/support/time.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/security/server_credentials.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/service/agent_service.h"
#include "coordinator/service/control_service.h"
#include "coordinator/service/coordinator_metrics.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/service/job_updates.h"
#include "coordinator/service/nightly_schedule.h"
#include "coordinator/service/notification_handler.h"
#include "coordinator/service/parse_errors.h"
#include "coordinator/service/result_ingestor.h"
#include "coordinator/service/run_builder.h"
#include "coordinator/service/secrets.h"
#include "coordinator/service/server_tls.h"
#include "coordinator/service/stream_budget.h"
#include "coordinator/service/sweeper.h"
#include "coordinator/store/memory_store.h"
#include "coordinator/store/notification_listener.h"
#include "coordinator/store/store.h"
#include "engine/common/clock.h"
#include "engine/common/message_limits.h"
#include "engine/common/status_macros.h"

namespace fleetmark::service {
namespace {

// gRPC server reflection on one ServerBuilder, or not: libgrpc++_reflection adds its
// plugin to every ServerBuilder of the process once loaded (a static initializer), so
// this option removes it and adds it back only when `on`.
class ReflectionOption : public grpc::ServerBuilderOption {
 public:
  explicit ReflectionOption(bool on) : on_(on) {}
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    const std::string name = grpc::reflection::ProtoServerReflectionPlugin().name();
    std::erase_if(*plugins, [&](const auto& plugin) { return plugin->name() == name; });
    if (on_) plugins->push_back(std::make_unique<grpc::reflection::ProtoServerReflectionPlugin>());
  }

 private:
  bool on_;
};

class CoordinatorImpl : public Coordinator {
 public:
  explicit CoordinatorImpl(const CoordinatorOptions& options)
      : options_(options), clock_(options.clock != nullptr ? *options.clock : SystemClock()) {}

  ~CoordinatorImpl() override { Shutdown(); }

  absl::Status Init() {
    FLEETMARK_ASSIGN_OR_RETURN(const DescriptorLimit limit, RaiseDescriptorLimit());
    const int budget =
        StreamBudget(limit.soft, DescriptorReserve(limit.soft, options_.db_pool_size, options_.http_descriptors),
                     options_.max_agent_streams);
    stream_slots_ = std::make_unique<StreamSlots>(budget, limit.soft);
    store::StoreOptions store_options;
    store_options.connection.uri = options_.database_uri;
    store_options.connection.pool_size = options_.db_pool_size;
    store_options.connection.application_name = absl::StrCat("fleetmark-coordinator ", options_.coordinator_id);
    store_options.coordinator_id = options_.coordinator_id;
    store_options.online_window = 3 * options_.heartbeat_interval + absl::Seconds(5);
    store_options.health = options_.health;
    store_options.requeue_timeout =
        options_.requeue_timeout > absl::ZeroDuration() ? options_.requeue_timeout : options_.job_lease;
    if (options_.store == StoreBackend::kMemory) {
      memory_database_ = options_.memory_database != nullptr ? options_.memory_database
                                                             : std::make_shared<store::MemoryDatabase>(clock_);
      store_ = std::make_unique<store::MemoryStore>(store_options, memory_database_);
    } else {
      FLEETMARK_ASSIGN_OR_RETURN(store_, store::Store::Open(store_options));
    }
    FLEETMARK_RETURN_IF_ERROR(store_->Migrate());
    for (const std::string& token : options_.enrollment_tokens) {
      const std::string hash = Sha256Hex(token);
      FLEETMARK_RETURN_IF_ERROR(
          store_->EnsureEnrollmentToken(absl::StrCat("seed-", hash.substr(0, 12)), hash, "seeded at start"));
    }
    if (!options_.nightly_plan_file.empty()) {
      FLEETMARK_RETURN_IF_ERROR(SeedNightlySchedule(*store_, clock_,
                                                    {.plan_file = options_.nightly_plan_file,
                                                     .cron = options_.nightly_cron,
                                                     .selector = options_.nightly_selector}));
    }

    FLEETMARK_RETURN_IF_ERROR(ValidateChangeMonitorOptions(options_.changes));
    if (!options_.alert_webhook_url.empty()) {
      alerts::AlertWebhookOptions webhook_options;
      webhook_options.url = options_.alert_webhook_url;
      FLEETMARK_ASSIGN_OR_RETURN(webhook_,
                                 alerts::AlertWebhook::Create(webhook_options, &metrics_.alert_webhook_posts));
    }

    executor_ = std::make_unique<Executor>(options_.executor_threads, clock_);
    ingestor_ = std::make_unique<ResultIngestor>(*store_, ResultIngestorOptions{}, &metrics_);
    job_updates_ = MakeJobUpdateQueue(*store_, options_.job_lease);
    job_ends_ = MakeJobEndQueue(*store_);
    dispatcher_ = std::make_unique<Dispatcher>(*store_, registry_, *executor_, options_.job_lease, &metrics_);
    AgentServiceOptions agent_options;
    agent_options.heartbeat_interval = options_.heartbeat_interval;
    agent_options.job_lease = options_.job_lease;
    agent_options.metrics = &metrics_;
    agent_options.stream_slots = stream_slots_.get();
    agent_service_ =
        std::make_unique<AgentServiceImpl>(AgentServiceStores{*store_, *store_, *store_}, *executor_, registry_,
                                           *dispatcher_, *ingestor_, *job_updates_, *job_ends_, agent_options, clock_);
    RunBuilderOptions run_options;
    run_options.max_attempts = static_cast<uint32_t>(options_.max_attempts);
    run_options.default_preconditions = options_.default_preconditions;
    runs_ = std::make_unique<RunBuilder>(*store_, clock_, run_options);
    ControlServiceOptions control_options;
    control_options.admin_token = options_.admin_token;
    control_options.job_lease = options_.job_lease;
    // schedules_ is created below, before the server starts taking calls.
    control_options.run_schedule = [this](const std::string& name) { return schedules_->RunNow(name); };
    if (!options_.read_database_uri.empty()) {
      FLEETMARK_RETURN_IF_ERROR(OpenReadReplica(store_options));
      control_options.read_replica = read_store_.get();
      control_options.read_router = read_router_.get();
    }
    control_service_ =
        std::make_unique<ControlServiceImpl>(*store_, *executor_, *dispatcher_, registry_, *runs_, control_options);
    scheduler::ScheduleRunnerOptions schedule_options;
    schedule_options.max_attempts = static_cast<uint32_t>(options_.max_attempts);
    schedules_ = std::make_unique<scheduler::ScheduleRunner>(
        *store_, clock_, [this](const v1::Schedule& s) { return runs_->Scheduled(s); }, schedule_options);

    changes_ = std::make_unique<ChangeMonitor>(*store_, *dispatcher_, *runs_, webhook_.get(), options_.changes);

    SweeperParts sweeper_parts;
    sweeper_parts.tokens = store_.get();
    sweeper_parts.agents = store_.get();
    sweeper_parts.runs = store_.get();
    sweeper_parts.retention = store_.get();
    sweeper_parts.registry = &registry_;
    sweeper_parts.dispatcher = dispatcher_.get();
    sweeper_parts.executor = executor_.get();
    sweeper_parts.schedules = schedules_.get();
    sweeper_parts.changes = changes_.get();
    SweeperOptions sweeper_options;
    sweeper_options.heartbeat_interval = options_.heartbeat_interval;
    sweeper_options.job_lease = options_.job_lease;
    sweeper_options.sweep_interval = options_.sweep_interval;
    sweeper_options.db_outage_grace = options_.db_outage_grace;
    sweeper_options.partitions_ahead = options_.partitions_ahead;
    sweeper_ = std::make_unique<Sweeper>(sweeper_parts, sweeper_options, clock_);
    FLEETMARK_RETURN_IF_ERROR(sweeper_->EnsurePartitions());

    if (options_.listen_notifications) {
      notifications_ = std::make_unique<NotificationHandler>(
          registry_, *dispatcher_, *executor_, [this] { sweeper_->EndRevokedAgents(); }, &metrics_);
      if (memory_database_ != nullptr) {
        memory_subscription_ =
            memory_database_->AddSubscriber([this](const store::Notification& n) { notifications_->Handle(n); });
      } else {
        FLEETMARK_RETURN_IF_ERROR(StartListener(store_options.connection));
      }
    }

    FLEETMARK_ASSIGN_OR_RETURN(
        std::shared_ptr<grpc::ServerCredentials> credentials,
        ServerCredentialsFromFiles(options_.tls_cert_file, options_.tls_key_file, options_.tls_client_ca_file));
    // grpc.health.v1.Health, gRPC's implementation (a process-wide switch, read when a
    // server is built); statuses follow the database (SetServing).
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.SetOption(std::make_unique<ReflectionOption>(options_.grpc_reflection));
    builder.AddListeningPort(options_.listen_address, credentials, &port_);
    // gRPC sets SO_REUSEPORT on Linux by default: a second coordinator on the same port
    // would then share it silently (agents and CLI calls landing on either). Refuse.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.RegisterService(agent_service_.get());
    builder.RegisterService(control_service_.get());
    // A request that fails to parse: INVALID_ARGUMENT with a reason (after the admin
    // token check for control calls) instead of gRPC's bare UNIMPLEMENTED.
    builder.experimental().SetInterceptorCreators(MakeParseErrorInterceptors(
        [control = control_service_.get()](const std::string& method, const grpc::ServerContextBase& context) {
          if (absl::StartsWith(method, "/fleetmark.v1.ControlService/")) return control->Authorize(context);
          return grpc::Status::OK;
        }));
    // Keepalive: ping idle connections so dead agents are noticed; accept agents'
    // pings every 10 s without counting strikes.
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
    // Explicit both ways (gRPC receives 4 MiB by default): engine/common/message_limits.h.
    builder.SetMaxReceiveMessageSize(kCoordinatorMaxMessageBytes);
    builder.SetMaxSendMessageSize(kCoordinatorMaxMessageBytes);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port_ == 0) {
      return absl::UnavailableError(absl::StrCat("listen_address \"", options_.listen_address,
                                                 "\": cannot listen (port in use or bad address?)"));
    }
    health_ = server_->GetHealthCheckService();
    // "" is SERVING from the start; the services' names are known once set. The
    // database answered the migrations just now.
    for (const char* name : {v1::AgentService::service_full_name(), v1::ControlService::service_full_name()}) {
      health_->SetServingStatus(name, true);
    }
    sweeper_->Start(health_);
    return absl::OkStatus();
  }

  int port() const override { return port_; }

  absl::StatusOr<int> CheckHealth() override {
    absl::StatusOr<std::vector<int>> applied = store_->AppliedMigrations();
    if (!applied.ok()) {
      return absl::UnavailableError(absl::StrCat("database unreachable: ", applied.status().message()));
    }
    const std::set<int> have(applied->begin(), applied->end());
    std::vector<int> missing;
    for (int version : store::EmbeddedMigrationVersions()) {
      if (have.count(version) == 0) missing.push_back(version);
    }
    if (!missing.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("database schema is behind: migration(s) ", absl::StrJoin(missing, ", "),
                       " not applied (applied: ", applied->empty() ? "none" : absl::StrJoin(*applied, ", "),
                       "); restart a coordinator of this version to apply them"));
    }
    return applied->empty() ? 0 : applied->back();
  }

  // The read router and a store on the replica; the replica may be down now.
  absl::Status OpenReadReplica(const store::StoreOptions& primary) {
    store::ReadRouterOptions router_options;
    router_options.primary_uri = options_.database_uri;
    router_options.replica_uri = options_.read_database_uri;
    router_options.max_lag = options_.read_max_lag;
    FLEETMARK_ASSIGN_OR_RETURN(read_router_, store::ReadRouter::Start(router_options));
    store::StoreOptions replica = primary;
    replica.connection.uri = options_.read_database_uri;
    replica.connection.pool_size = std::max(2, options_.db_pool_size / 2);
    replica.connection.application_name = absl::StrCat("fleetmark-coordinator ", options_.coordinator_id, " (reads)");
    replica.connection.connect_at_create = false;
    FLEETMARK_ASSIGN_OR_RETURN(read_store_, store::Store::Open(replica));
    return absl::OkStatus();
  }

  std::string RenderMetrics() override {
    MetricsSources sources;
    sources.store = store_.get();
    sources.metrics = &metrics_;
    sources.stream_budget = stream_slots_->budget();
    sources.read_router = read_router_.get();
    sources.listener = listener_.get();
    return RenderCoordinatorMetrics(sources);
  }

  store::ReadRouter* read_router() override { return read_router_.get(); }

  int stream_budget() const override { return stream_slots_->budget(); }
  int descriptor_limit() const override { return stream_slots_->descriptor_limit(); }

  void Wait() override {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&stopping_));
  }

  void Shutdown() override {
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return;
      stopping_ = shut_down_ = true;
    }
    // NOT_SERVING for every service from now on (later updates are ignored), so load
    // balancers move away while in-flight calls finish.
    if (health_ != nullptr) health_->Shutdown();
    if (sweeper_ != nullptr) sweeper_->Stop();
    listener_.reset();
    if (memory_subscription_.has_value()) {
      memory_database_->RemoveSubscriber(*memory_subscription_);
      memory_subscription_.reset();
    }
    changes_.reset();
    webhook_.reset();  // waits for a POST in flight (bounded by its timeout)
    // Close agent streams so the server's shutdown does not wait for them.
    for (const auto& session : registry_.All()) {
      session->Close(grpc::Status(grpc::StatusCode::UNAVAILABLE, "coordinator shutting down"));
    }
    // The grace is gRPC's own timer, on the monotonic clock whatever clock the
    // coordinator runs on: it bounds a real wait, it decides nothing.
    if (server_ != nullptr) {
      server_->Shutdown(
          gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                       gpr_time_from_nanos(absl::ToInt64Nanoseconds(options_.shutdown_grace), GPR_TIMESPAN)));
    }
    if (executor_ != nullptr) executor_->Shutdown();
    ingestor_.reset();
    job_updates_.reset();
    job_ends_.reset();
  }

 private:
  // The LISTEN connection's thread (store/notification_listener.h): notifications go
  // to the handler; each (re)connect asks for a sweep, for what it may have missed.
  absl::Status StartListener(const store::ConnectionOptions& connection) {
    store::NotificationListener::Options listener_options;
    listener_options.connection = connection;
    listener_options.connection.application_name =
        absl::StrCat("fleetmark-coordinator ", options_.coordinator_id, " (listener)");
    FLEETMARK_ASSIGN_OR_RETURN(
        listener_, store::NotificationListener::Start(
                       listener_options, [this](const store::Notification& n) { notifications_->Handle(n); },
                       [this](bool) {
                         // Disconnects notified before this LISTEN were missed.
                         sweeper_->RequestSweep();
                         executor_->Post([this] { sweeper_->EndRevokedAgents(); });
                       }));
    return absl::OkStatus();
  }

  const CoordinatorOptions options_;
  const Clock& clock_;
  // The memory store's database (StoreBackend::kMemory), else null; shared with the
  // test or the other coordinators that gave it.
  std::shared_ptr<store::MemoryDatabase> memory_database_;
  std::unique_ptr<store::Store> store_;
  // --read_database_uri: the lag router and a store on the replica (reads only).
  std::unique_ptr<store::ReadRouter> read_router_;
  std::unique_ptr<store::Store> read_store_;
  CoordinatorMetrics metrics_;                 // before the components that update it
  std::unique_ptr<StreamSlots> stream_slots_;  // before the agent service, which admits through it
  AgentRegistry registry_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<ResultIngestor> ingestor_;
  std::unique_ptr<JobUpdateQueue> job_updates_;
  std::unique_ptr<JobEndQueue> job_ends_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<AgentServiceImpl> agent_service_;
  std::unique_ptr<RunBuilder> runs_;  // submit's and the scheduler's
  std::unique_ptr<ControlServiceImpl> control_service_;
  std::unique_ptr<scheduler::ScheduleRunner> schedules_;
  std::unique_ptr<NotificationHandler> notifications_;
  std::unique_ptr<store::NotificationListener> listener_;  // null with listen_notifications off or memory
  // The memory database's subscription standing for the listener (memory store only).
  std::optional<int> memory_subscription_;
  std::unique_ptr<alerts::AlertWebhook> webhook_;  // null without alert_webhook_url
  std::unique_ptr<ChangeMonitor> changes_;
  std::unique_ptr<Sweeper> sweeper_;  // after what it sweeps (destroyed first)
  std::unique_ptr<grpc::Server> server_;
  // server_'s grpc.health.v1.Health statuses (owned by server_; null before it starts).
  grpc::HealthCheckServiceInterface* health_ = nullptr;
  int port_ = 0;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Start(const CoordinatorOptions& options) {
  FLEETMARK_RETURN_IF_ERROR(CheckCoordinatorOptions(options));
  auto coordinator = std::make_unique<CoordinatorImpl>(options);
  FLEETMARK_RETURN_IF_ERROR(coordinator->Init());
  return std::unique_ptr<Coordinator>(std::move(coordinator));
}

}  // namespace fleetmark::service
