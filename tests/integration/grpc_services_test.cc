// The coordinator's standard gRPC services, asked as grpc_health_probe and grpcurl ask
// them, of a real fleetmark-coordinator process over loopback: grpc.health.v1.Health
// (Check and Watch, following the database) and server reflection (on by default,
// off with --grpc_reflection=false). Clients generated from proto/grpc/. The coordinator
// runs on the in-memory store, but where health follows PostgreSQL (cut off by the test).
#include <memory>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "tests/integration/fleet_harness.h"

namespace fleetmark::testing {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using grpc::reflection::v1alpha::ServerReflection;
using grpc::reflection::v1alpha::ServerReflectionRequest;
using grpc::reflection::v1alpha::ServerReflectionResponse;
using ::testing::Contains;

constexpr char kControlService[] = "fleetmark.v1.ControlService";
constexpr char kAgentService[] = "fleetmark.v1.AgentService";

class GrpcServicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fleetmark-grpc-services");
    ASSERT_FALSE(dir_.empty());
  }
  // A fresh PostgreSQL database for the coordinator StartCoordinator starts next (else
  // it runs on the in-memory store); skips without FLEETMARK_TEST_PG_URI unless
  // FLEETMARK_TEST_REQUIRE_PG is set.
  void UsePostgres() {
    if (TestPgUri().empty()) {
      if (PgRequired()) FAIL() << "FLEETMARK_TEST_REQUIRE_PG is set but FLEETMARK_TEST_PG_URI is not";
      GTEST_SKIP() << "FLEETMARK_TEST_PG_URI unset: no PostgreSQL";
    }
    auto database = TestDatabase::Create(TestPgUri());
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
  }

  void StartCoordinator(std::vector<std::string> extra_flags = {}) {
    CoordinatorConfig config;
    if (database_ != nullptr) {
      config.database_uri = database_->uri();
    } else {
      config.memory_store = true;
    }
    config.extra_flags = std::move(extra_flags);
    auto coordinator = CoordinatorProcess::Start(dir_, config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    channel_ = grpc::CreateChannel(coordinator_->address(), grpc::InsecureChannelCredentials());
  }

  void TearDown() override {
    if (HasFailure() && coordinator_ != nullptr) {
      const std::string log = coordinator_->Log();
      std::cerr << "---- coordinator log (tail)\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n";
    }
    coordinator_.reset();
    if (database_ != nullptr) {  // as it was, so that the drop can go ahead
      (void)Psql(database_->admin_uri(), absl::StrCat("ALTER DATABASE ", database_->name(), " ALLOW_CONNECTIONS true"));
    }
    database_.reset();
    if (!dir_.empty()) RemoveTree(dir_);
  }

  // Health/Check of `service`: its status, or the call's error code.
  std::string Check(const std::string& service) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    HealthCheckRequest request;
    request.set_service(service);
    HealthCheckResponse response;
    const grpc::Status status = Health::NewStub(channel_)->Check(&context, request, &response);
    if (!status.ok()) return absl::StrCat("error ", status.error_code(), ": ", status.error_message());
    return HealthCheckResponse::ServingStatus_Name(response.status());
  }

  // One request on a ServerReflectionInfo stream: its answer, or the stream's status.
  grpc::Status Reflect(const ServerReflectionRequest& request, ServerReflectionResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    auto stream = ServerReflection::NewStub(channel_)->ServerReflectionInfo(&context);
    const bool answered = stream->Write(request) && stream->Read(response);
    stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!status.ok()) return status;
    if (!answered) return grpc::Status(grpc::StatusCode::INTERNAL, "no answer");
    return status;
  }

  std::string dir_;
  std::unique_ptr<TestDatabase> database_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(GrpcServicesTest, HealthIsServingThenFollowsTheDatabaseAndWatchSeesIt) {
  ASSERT_NO_FATAL_FAILURE(UsePostgres());  // the database is cut off below
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  EXPECT_EQ(Check(""), "SERVING");
  EXPECT_EQ(Check(kControlService), "SERVING");
  EXPECT_EQ(Check(kAgentService), "SERVING");
  EXPECT_THAT(Check("fleetmark.v1.NoSuchService"), ::testing::StartsWith(absl::StrCat("error ", grpc::NOT_FOUND)));

  grpc::ClientContext watch_context;
  watch_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  HealthCheckRequest watch_request;  // "" = the server as a whole
  auto watch = Health::NewStub(channel_)->Watch(&watch_context, watch_request);
  HealthCheckResponse update;
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVING);

  // The database refuses connections and the coordinator's are cut: NOT_SERVING by
  // its next liveness flush (every --heartbeat_interval, 1 s here), for every name.
  ASSERT_TRUE(
      Psql(database_->admin_uri(), absl::StrCat("ALTER DATABASE ", database_->name(), " ALLOW_CONNECTIONS false"))
          .ok());
  ASSERT_TRUE(Psql(database_->admin_uri(),
                   absl::StrCat("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '",
                                database_->name(), "'"))
                  .ok());
  EXPECT_TRUE(WaitUntil([&] { return Check("") == "NOT_SERVING"; }, absl::Seconds(30))) << Check("");
  EXPECT_EQ(Check(kControlService), "NOT_SERVING");
  EXPECT_EQ(Check(kAgentService), "NOT_SERVING");
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::NOT_SERVING);

  // Back: SERVING again, and Watch says so.
  ASSERT_TRUE(
      Psql(database_->admin_uri(), absl::StrCat("ALTER DATABASE ", database_->name(), " ALLOW_CONNECTIONS true")).ok());
  EXPECT_TRUE(WaitUntil([&] { return Check("") == "SERVING"; }, absl::Seconds(30))) << Check("");
  EXPECT_EQ(Check(kControlService), "SERVING");
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVING);
  watch_context.TryCancel();
}

TEST_F(GrpcServicesTest, ReflectionListsAndDescribesTheServicesByDefault) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  ServerReflectionRequest list;
  list.set_list_services("*");
  ServerReflectionResponse listed;
  const grpc::Status status = Reflect(list, &listed);
  ASSERT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  ASSERT_TRUE(listed.has_list_services_response()) << listed.ShortDebugString();
  std::set<std::string> names;
  for (const auto& service : listed.list_services_response().service()) names.insert(service.name());
  EXPECT_THAT(names, Contains(kControlService));
  EXPECT_THAT(names, Contains(kAgentService));
  EXPECT_THAT(names, Contains("grpc.health.v1.Health"));

  // What grpcurl asks next to describe or call a method: the file declaring the service.
  ServerReflectionRequest symbol;
  symbol.set_file_containing_symbol(kControlService);
  ServerReflectionResponse described;
  ASSERT_TRUE(Reflect(symbol, &described).ok());
  ASSERT_TRUE(described.has_file_descriptor_response()) << described.ShortDebugString();
  ASSERT_GE(described.file_descriptor_response().file_descriptor_proto_size(), 1);
  google::protobuf::FileDescriptorProto file;
  ASSERT_TRUE(file.ParseFromString(described.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(file.package(), "fleetmark.v1");
  std::set<std::string> declared;
  for (const auto& service : file.service()) declared.insert(service.name());
  EXPECT_THAT(declared, Contains("ControlService")) << file.name();
}

TEST_F(GrpcServicesTest, ReflectionOffWithTheFlagHealthStillServed) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--grpc_reflection=false"}));
  ServerReflectionRequest list;
  list.set_list_services("*");
  ServerReflectionResponse listed;
  const grpc::Status status = Reflect(list, &listed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << status.error_message();
  EXPECT_EQ(Check(""), "SERVING");
  EXPECT_EQ(Check(kControlService), "SERVING");
}

}  // namespace
}  // namespace fleetmark::testing
