// CheckHello (coordinator/service/hello_check.h): the hello checks that need no
// database, refusing with a message that names the field and its allowed form.
#include "coordinator/service/hello_check.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::service {
namespace {

using ::testing::HasSubstr;

v1::Hello GoodHello() {
  v1::Hello hello;
  hello.set_protocol_version(1);
  hello.set_agent_name("pixel-7");
  hello.set_enrollment_token("token");
  (*hello.mutable_labels())["rack"] = "b";
  hello.set_running_job_id("44444444-4444-4444-8444-444444444444");
  hello.set_instance_id("55555555-5555-4555-8555-555555555555");
  hello.set_machine_id("0f1e2d3c4b5a69788796a5b4c3d2e1f0");
  hello.set_boot_id("6c5f1f3e-8a0d-4c1b-9a3e-2f4b5c6d7e8f");
  return hello;
}

TEST(CheckHelloTest, AGoodHelloPasses) {
  EXPECT_TRUE(CheckHello(GoodHello()).ok()) << CheckHello(GoodHello());
  v1::Hello no_job = GoodHello();
  no_job.clear_running_job_id();
  EXPECT_TRUE(CheckHello(no_job).ok());
  v1::Hello no_instance = GoodHello();  // an agent built before Hello.instance_id
  no_instance.clear_instance_id();
  EXPECT_TRUE(CheckHello(no_instance).ok());
  v1::Hello longest = GoodHello();
  (*longest.mutable_labels())[std::string(63, 'k')] = "v";
  (*longest.mutable_labels())["A.b_c-9"] = "v";
  EXPECT_TRUE(CheckHello(longest).ok()) << CheckHello(longest);
}

TEST(CheckHelloTest, ProtocolVersionOutsideTheRangeSaysWhichSideToUpgrade) {
  v1::Hello hello = GoodHello();
  hello.set_protocol_version(7);
  absl::Status status = CheckHello(hello);
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("protocol version 7 not in [1, 1]"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("too new"));
}

// A trial found the coordinator welcoming label keys that no --labels could give and
// that selectors cannot name: empty, whitespace-only, markup.
TEST(CheckHelloTest, LabelKeysOutsideTheAgentsFormAreRefusedNamingTheForm) {
  for (const std::string& key :
       {std::string(""), std::string(" "), std::string("   "), std::string("<b>rack</b>"),
        std::string("<script>alert(1)</script>"), std::string("rack=b"), std::string("r k"), std::string("label:x")}) {
    v1::Hello hello = GoodHello();
    (*hello.mutable_labels())[key] = "v";
    absl::Status status = CheckHello(hello);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << "key \"" << key << "\": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("hello.labels key"));
    EXPECT_THAT(std::string(status.message()), HasSubstr("1 to 63 characters of [A-Za-z0-9._-]"));
  }
  // Tabs, over-long keys and bidirectional controls (U+202E) are refused by the text
  // rules, which run first.
  for (const std::string& key : {std::string("  \t"), std::string(64, 'k'), std::string("\u202erack")}) {
    v1::Hello hello = GoodHello();
    (*hello.mutable_labels())[key] = "v";
    absl::Status status = CheckHello(hello);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("hello refused: hello.labels key"));
  }
}

TEST(CheckHelloTest, RunningJobIdMustBeEmptyOrAUuid) {
  for (const std::string& id : {std::string("job-1"), std::string("'; DROP TABLE jobs; --"),
                                std::string("44444444-4444-4444-8444-44444444444"), std::string(" ")}) {
    v1::Hello hello = GoodHello();
    hello.set_running_job_id(id);
    absl::Status status = CheckHello(hello);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << "id \"" << id << "\": " << status;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr("hello.running_job_id: empty or a UUID (8-4-4-4-12 hex digits)"));
  }
}

// Issue 32, item 2: the instance id tells a copy of a credential from its own process
// reconnecting; it is stored and compared, so anything but a UUID is refused.
// Issue 31, item 5: the host identity the same-host rule compares: empty (Android,
// containers) or 1 to 64 of [0-9a-f-].
TEST(CheckHelloTest, AHostIdentityNotOfTheIdFormIsRefusedNamingTheField) {
  v1::Hello unknown = GoodHello();
  unknown.clear_machine_id();
  unknown.clear_boot_id();
  EXPECT_TRUE(CheckHello(unknown).ok());
  v1::Hello machine = GoodHello();
  machine.set_machine_id("Machine One");
  absl::Status status = CheckHello(machine);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("hello.machine_id: empty or 1 to 64 of [0-9a-f-]"));
  v1::Hello boot = GoodHello();
  boot.set_boot_id(std::string(65, 'a'));
  status = CheckHello(boot);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("hello.boot_id"));
}

TEST(CheckHelloTest, AnInstanceIdThatIsNotAUuidIsRefusedNamingTheField) {
  for (const std::string& id :
       {std::string("me"), std::string("55555555-5555-4555-8555-55555555555"), std::string(100, 'a')}) {
    v1::Hello hello = GoodHello();
    hello.set_instance_id(id);
    absl::Status status = CheckHello(hello);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << "id \"" << id << "\": " << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("hello.instance_id: empty or a UUID (8-4-4-4-12 hex digits)"));
    EXPECT_LT(status.message().size(), 300u);
  }
}

TEST(CheckHelloTest, TextAndNameRulesStillApply) {
  v1::Hello control = GoodHello();
  control.mutable_host()->set_cpu_model("\x1b]0;pwned\x07");
  EXPECT_THAT(std::string(CheckHello(control).message()), HasSubstr("hello refused: hello.host.cpu_model"));
  v1::Hello name = GoodHello();
  name.set_agent_name("bad name!");
  EXPECT_THAT(std::string(CheckHello(name).message()), HasSubstr("hello.agent_name"));
}

}  // namespace
}  // namespace fleetmark::service
