// Emulation detection against a real qemu-user: a static arm64 probe
// (probe/emulation_probe.c) run under qemu-aarch64-static reports uname and
// /proc/cpuinfo as qemu gives them to a guest binary; DetectEmulation on exactly that
// view, for an aarch64 binary, must say emulated. (The agent's own arm64 build under
// qemu is tested by the device build's empty-root test.)
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "engine/topology/emulation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine::topology_internal {
namespace {

using ::testing::HasSubstr;

// Runs `command`, returns its standard output (at most 1 MiB) and exit status.
std::pair<std::string, int> RunCommand(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), &pclose);
  if (!pipe) return {"", -1};
  std::string out;
  char buffer[4096];
  size_t n;
  while (out.size() < (1 << 20) && (n = fread(buffer, 1, sizeof buffer, pipe.get())) > 0) {
    out.append(buffer, n);
  }
  return {out, pclose(pipe.release())};
}

TEST(EmulationQemuTest, Arm64ProbeUnderQemuIsJudgedEmulated) {
  auto [out, status] = RunCommand(absl::StrCat(FLEETMARK_QEMU_AARCH64, " ", FLEETMARK_ARM64_PROBE, " 2>&1"));
  ASSERT_EQ(status, 0) << out;
  absl::string_view view = out;
  ASSERT_TRUE(absl::ConsumePrefix(&view, "uname ")) << out;
  const size_t eol = view.find('\n');
  ASSERT_NE(eol, absl::string_view::npos) << out;
  const std::string machine(view.substr(0, eol));
  const std::string cpuinfo_text(view.substr(eol + 1));
  // The premise: qemu-user fakes uname but passes the host kernel's /proc/cpuinfo.
  EXPECT_EQ(machine, "aarch64");

  const std::string root = engine::testing::ScratchRoot("qemu-view");
  engine::testing::WriteTreeFile(root, "/proc/cpuinfo", cpuinfo_text);
  SysfsReader reader(root);
  EmulationVerdict verdict = DetectEmulation(reader, ParseCpuInfo(cpuinfo_text), "aarch64", machine);
  EXPECT_TRUE(verdict.emulated) << verdict.evidence << "\n" << cpuinfo_text;
  EXPECT_THAT(verdict.evidence, HasSubstr("binary aarch64, uname aarch64, /proc/cpuinfo x86"));
}

TEST(EmulationQemuTest, NativeViewOfThisMachineIsNot) {
  // The same probe logic natively: this machine's uname and cpuinfo, this binary.
  SysfsReader reader("");
  const std::string cpuinfo_text = reader.Read("/proc/cpuinfo").value_or("");
  auto [out, status] = RunCommand("uname -m");
  ASSERT_EQ(status, 0);
  EmulationVerdict verdict =
      DetectEmulation(reader, ParseCpuInfo(cpuinfo_text), BinaryArch(), absl::StripAsciiWhitespace(out));
  EXPECT_FALSE(verdict.emulated) << verdict.evidence;
}

}  // namespace
}  // namespace fleetmark::engine::topology_internal
