// `fleetmark topology`: detects the host (engine/topology) and prints it as text or as
// HostInfo JSON (protobuf's JSON mapping, the same message agents send).
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/cli/topology_command.h"
#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "google/protobuf/util/json_util.h"

ABSL_DECLARE_FLAG(std::string, fsroot);

namespace fleetmark::cli {
namespace {

int TopologyCommand(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "fleetmark topology: takes no arguments, got \"" << args[0] << "\"\n";
    return kExitUsage;
  }
  // --format is shared with `run` (default "table"): table/text print text, json JSON.
  const std::string format = absl::GetFlag(FLAGS_format);
  const bool json = format == "json";
  if (!json && format != "text" && format != "table") {
    std::cerr << "fleetmark topology: --format must be text or json, got \"" << EchoValue(format) << "\"\n";
    return kExitUsage;
  }
  engine::HostOptions options;
  options.fsroot = absl::GetFlag(FLAGS_fsroot);
  absl::StatusOr<v1::HostInfo> host = engine::DetectHost(options);
  if (!host.ok()) {
    std::cerr << "fleetmark topology: " << host.status().message() << "\n";
    return host.status().code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (!json) {
    std::cout << engine::FormatHostText(*host);
    return kExitOk;
  }
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  print.always_print_primitive_fields = true;
  std::string text;
  const auto status = google::protobuf::util::MessageToJsonString(*host, &text, print);
  if (!status.ok()) {
    std::cerr << "fleetmark topology: JSON printer: " << status.ToString() << "\n";
    return kExitFailure;
  }
  std::cout << text;
  return kExitOk;
}

}  // namespace

void RegisterTopologyCommand(CommandRegistry& registry) {
  registry.Add({.name = "topology",
                .summary = "show this host: core classes, hwloc kinds, SMT, caches, governor",
                .usage = "fleetmark topology [--fsroot DIR] [--format text|json]",
                .run = TopologyCommand});
}

}  // namespace fleetmark::cli
