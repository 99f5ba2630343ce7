// `fleetmark topology`: detects the host (engine/topology) and prints it as text or as
// HostInfo JSON (protobuf's JSON mapping, the same message agents send).
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/cli/topology_command.h"
#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "google/protobuf/util/json_util.h"

ABSL_DECLARE_FLAG(std::string, fsroot);

namespace fleetmark::cli {
namespace {

absl::StatusOr<int> TopologyCommand(const std::vector<std::string>& args) {
  if (!args.empty()) return absl::InvalidArgumentError(absl::StrCat("takes no arguments, got \"", args[0], "\""));
  // --format is shared with `run` (default "table"): table/text print text, json JSON.
  const std::string format = absl::GetFlag(FLAGS_format);
  const bool json = format == "json";
  if (!json && format != "text" && format != "table") {
    return absl::InvalidArgumentError(absl::StrCat("--format must be text or json, got \"", EchoValue(format), "\""));
  }
  engine::HostOptions options;
  options.fsroot = absl::GetFlag(FLAGS_fsroot);
  absl::StatusOr<v1::HostInfo> host = engine::DetectHost(options);
  if (!host.ok()) return host.status();
  if (!json) {
    std::cout << engine::FormatHostText(*host);
    return kExitOk;
  }
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  print.always_print_primitive_fields = true;
  std::string text;
  const auto status = google::protobuf::util::MessageToJsonString(*host, &text, print);
  if (!status.ok()) return absl::InternalError(absl::StrCat("JSON printer: ", status.ToString()));
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
