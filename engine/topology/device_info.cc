#include "engine/topology/device_info.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/topology/sensor_range.h"

extern char** environ;

namespace fleetmark::engine::topology_internal {
namespace {

constexpr absl::string_view kGetprop = "/system/bin/getprop";
constexpr absl::string_view kBuildProps[] = {"/system/build.prop", "/vendor/build.prop"};
constexpr absl::string_view kPowerSupplyDir = "/sys/class/power_supply";
constexpr absl::string_view kThermalDir = "/sys/class/thermal";
constexpr char kUnknown[] = "unknown";
constexpr std::size_t kMaxGetpropBytes = 1 << 20;
constexpr int kGetpropTimeoutMs = 10'000;

// Runs `path` with no argument and returns its standard output (at most 1 MiB), or
// nullopt if it cannot be started, exits non-zero or takes longer than 10 s (killed:
// a hung getprop must not hang the agent's start).
std::optional<std::string> RunCapture(const std::string& path) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return std::nullopt;
  }
  std::string out;
  bool timed_out = false;
  char buffer[4096];
  while (out.size() < kMaxGetpropBytes) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, kGetpropTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;
      break;
    }
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timed_out || out.size() >= kMaxGetpropBytes) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

std::string Prop(const std::map<std::string, std::string>& props, absl::string_view key) {
  auto it = props.find(std::string(key));
  return it == props.end() || it->second.empty() ? std::string(kUnknown) : it->second;
}

bool Known(absl::string_view value) { return value != kUnknown; }

// The first known of several properties, else "unknown".
std::string FirstProp(const std::map<std::string, std::string>& props, std::initializer_list<absl::string_view> keys) {
  for (absl::string_view key : keys) {
    std::string value = Prop(props, key);
    if (Known(value)) return value;
  }
  return kUnknown;
}

}  // namespace

std::map<std::string, std::string> ParseGetpropOutput(absl::string_view text) {
  std::map<std::string, std::string> props;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    // [ro.product.model]: [Pixel 7]
    if (!absl::ConsumePrefix(&line, "[")) continue;
    const std::size_t close = line.find("]: [");
    if (close == absl::string_view::npos || !absl::ConsumeSuffix(&line, "]")) continue;
    props[std::string(line.substr(0, close))] = std::string(line.substr(close + 4));
  }
  return props;
}

std::map<std::string, std::string> ParseBuildProp(absl::string_view text) {
  std::map<std::string, std::string> props;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    const std::size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;  // "import ..." and other directives
    props.emplace(std::string(absl::StripAsciiWhitespace(line.substr(0, eq))),
                  std::string(absl::StripAsciiWhitespace(line.substr(eq + 1))));
  }
  return props;
}

std::optional<std::map<std::string, std::string>> ReadAndroidProperties(const SysfsReader& reader,
                                                                        std::string* source) {
  const std::string getprop = reader.Resolve(kGetprop);
  if (access(getprop.c_str(), X_OK) == 0) {
    if (std::optional<std::string> out = RunCapture(getprop)) {
      std::map<std::string, std::string> props = ParseGetpropOutput(*out);
      if (!props.empty()) {
        *source = "getprop";
        return props;
      }
    }
  }
  bool any_file = false;
  std::map<std::string, std::string> props;
  for (absl::string_view file : kBuildProps) {
    std::optional<std::string> text = reader.Read(file);
    if (!text) {
      any_file = any_file || reader.Exists(file);  // present but denied: still Android
      continue;
    }
    any_file = true;
    for (auto& [key, value] : ParseBuildProp(*text)) props.emplace(key, std::move(value));
  }
  if (!any_file && !reader.Exists(kGetprop)) return std::nullopt;
  *source = "build.prop";
  return props;
}

void FillAndroid(const std::map<std::string, std::string>& props, absl::string_view source, v1::HostInfo& host) {
  v1::AndroidInfo& android = *host.mutable_android();
  android.set_source(std::string(source));
  android.set_manufacturer(Prop(props, "ro.product.manufacturer"));
  android.set_model(Prop(props, "ro.product.model"));
  android.set_board(FirstProp(props, {"ro.product.board", "ro.board.platform"}));
  const std::string soc_maker = Prop(props, "ro.soc.manufacturer");
  const std::string soc_model = Prop(props, "ro.soc.model");
  if (Known(soc_model)) {
    android.set_soc(Known(soc_maker) ? absl::StrCat(soc_maker, " ", soc_model) : soc_model);
  } else {
    android.set_soc(FirstProp(props, {"ro.board.platform", "ro.hardware"}));
  }
  android.set_release(Prop(props, "ro.build.version.release"));
  uint32_t api = 0;
  android.set_api_level(absl::SimpleAtoi(Prop(props, "ro.build.version.sdk"), &api) ? api : 0);
  android.set_fingerprint(Prop(props, "ro.build.fingerprint"));
  android.set_abi(Prop(props, "ro.product.cpu.abi"));

  host.set_os(Known(android.release()) ? absl::StrCat("Android ", android.release()) : "Android");
  std::vector<std::string> model;
  if (Known(android.manufacturer())) model.push_back(android.manufacturer());
  if (Known(android.model())) model.push_back(android.model());
  if (!model.empty()) host.set_device_model(absl::StrJoin(model, " "));
  if (Known(android.soc())) host.set_soc(android.soc());
  std::vector<std::string> unknown;
  const std::initializer_list<std::pair<const char*, const std::string*>> fields = {
      {"manufacturer", &android.manufacturer()},
      {"model", &android.model()},
      {"board", &android.board()},
      {"soc", &android.soc()},
      {"release", &android.release()},
      {"fingerprint", &android.fingerprint()},
      {"abi", &android.abi()}};
  for (const auto& [name, value] : fields) {
    if (!Known(*value)) unknown.push_back(name);
  }
  if (android.api_level() == 0) unknown.push_back("api_level");
  if (!unknown.empty()) {
    host.add_notes(absl::StrCat("android (", source, "): unknown ", absl::StrJoin(unknown, ", ")));
  }
}

std::vector<v1::BatteryInfo> ReadBatteries(const SysfsReader& reader, std::vector<std::string>* notes,
                                           std::vector<std::string>* unreadable) {
  std::vector<v1::BatteryInfo> batteries;
  for (const std::string& name : reader.ListEntries(kPowerSupplyDir)) {
    const std::string dir = absl::StrCat(kPowerSupplyDir, "/", name);
    const std::optional<std::string> type = reader.Read(absl::StrCat(dir, "/type"));
    // Android names its battery "battery"; a denied type file still counts by name.
    if (type ? *type != "Battery" : name != "battery") continue;
    v1::BatteryInfo& battery = batteries.emplace_back();
    battery.set_name(name);
    const std::size_t level_noted = notes->size();
    const std::string level_path = absl::StrCat(dir, "/capacity");
    std::optional<double> level = ReadSensor(reader, level_path, kBatteryLevelRange, 1, level_path, notes);
    battery.set_level_percent(level ? static_cast<int32_t>(std::lround(*level)) : -1);
    if (!level && notes->size() == level_noted) unreadable->push_back(level_path);  // missing or denied
    std::optional<std::string> status = reader.Read(absl::StrCat(dir, "/status"));
    battery.set_status(status && !status->empty() ? *status : kUnknown);
    if (!status) unreadable->push_back(absl::StrCat(dir, "/status"));
    battery.set_charging(battery.status() == "Charging");
    const std::string temp_path = absl::StrCat(dir, "/temp");
    const std::size_t noted = notes->size();
    if (std::optional<double> celsius = ReadSensor(reader, temp_path, kTemperatureRange, 0.1, temp_path, notes)) {
      battery.set_temperature_c(*celsius);
      battery.set_temperature_known(true);
    } else if (notes->size() == noted) {
      unreadable->push_back(temp_path);  // missing or denied (implausible: noted)
    }
  }
  return batteries;
}

void FillPowerAndThermal(const SysfsReader& reader, v1::HostInfo& host) {
  std::vector<std::string> unreadable;
  std::vector<std::string> notes;
  for (v1::BatteryInfo& battery : ReadBatteries(reader, &notes, &unreadable)) {
    *host.add_batteries() = std::move(battery);
  }
  for (std::string& note : notes) host.add_notes(std::move(note));
  for (int zone : reader.ListNumbered(kThermalDir, "thermal_zone")) {
    const std::string dir = absl::StrCat(kThermalDir, "/thermal_zone", zone);
    v1::ThermalZoneInfo& info = *host.add_thermal_zones();
    info.set_zone(static_cast<uint32_t>(zone));
    std::optional<std::string> type = reader.Read(absl::StrCat(dir, "/type"));
    info.set_type(type && !type->empty() ? *type : kUnknown);
    if (!type) unreadable.push_back(absl::StrCat(dir, "/type"));
    const std::string temp_path = absl::StrCat(dir, "/temp");
    std::vector<std::string> notes;
    if (std::optional<double> celsius =
            ReadSensor(reader, temp_path, kTemperatureRange, 1e-3,
                       absl::StrCat("thermal_zone", zone, " (", info.type(), ")"), &notes)) {
      info.set_temperature_c(*celsius);
      info.set_temperature_known(true);
    } else if (notes.empty()) {
      unreadable.push_back(temp_path);
    }
    for (std::string& note : notes) host.add_notes(std::move(note));
  }
  if (!unreadable.empty()) {
    host.add_notes(absl::StrCat("unknown (missing or denied): ", absl::StrJoin(unreadable, ", ")));
  }
}

}  // namespace fleetmark::engine::topology_internal
