#include "agent/host_identity.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

class HostIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetmark-host-id-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(HostIdentityTest, ReadsTheMachineIdAndTheBootIdTrimmed) {
  HostIdentityFiles files;
  files.machine_id = {Write("machine-id", "0F1E2D3C4B5A69788796A5B4C3D2E1F0\n"), Write("dbus", "ffff\n")};
  files.boot_id = Write("boot_id", " 6c5f1f3e-8a0d-4c1b-9a3e-2f4b5c6d7e8f\n");
  const HostIds ids = ReadHostIds(files);
  EXPECT_EQ(ids.machine_id, "0f1e2d3c4b5a69788796a5b4c3d2e1f0");  // the first file, lower-cased
  EXPECT_EQ(ids.boot_id, "6c5f1f3e-8a0d-4c1b-9a3e-2f4b5c6d7e8f");
}

TEST_F(HostIdentityTest, FallsBackToTheDbusMachineId) {
  HostIdentityFiles files;
  // systemd's first-boot placeholder is not an id; a missing file is skipped too.
  files.machine_id = {dir_ + "/missing", Write("machine-id", "uninitialized\n"), Write("dbus", "abcdef0123\n")};
  files.boot_id = dir_ + "/no-boot-id";
  const HostIds ids = ReadHostIds(files);
  EXPECT_EQ(ids.machine_id, "abcdef0123");
  EXPECT_EQ(ids.boot_id, "");
}

TEST_F(HostIdentityTest, MissingOrMalformedFilesGiveEmptyIdsNeverAnError) {
  HostIdentityFiles files;
  files.machine_id = {dir_ + "/missing", Write("empty", ""), dir_};  // a directory is unreadable as a file
  files.boot_id = Write("boot_id", std::string(100, 'a'));           // longer than an id
  const HostIds ids = ReadHostIds(files);
  EXPECT_EQ(ids.machine_id, "");
  EXPECT_EQ(ids.boot_id, "");
  HostIdentityFiles none;
  none.machine_id = {};
  none.boot_id = "";
  EXPECT_EQ(ReadHostIds(none).machine_id, "");
}

}  // namespace
}  // namespace fleetmark::agent
