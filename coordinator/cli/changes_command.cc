// `fleetmark changes list [--since DURATION|DATE] [--agent NAME] [--state S]
// [--format table|json|csv]`: the coordinator's confirmed changes (ListChanges).
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "coordinator/changes/since.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/run_flags.h"
#include "engine/report/csv.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"
#include "google/protobuf/util/json_util.h"

namespace fleetmark::cli {
namespace {

constexpr char kChangesListUsage[] =
    "fleetmark changes list [--since DURATION|DATE] [--agent NAME] [--state S] [--format table|json|csv]";

std::string Optional(bool has, double ns) { return has ? report::FormatNanos(ns) : "-"; }

std::string Ratio(const v1::ChangeInfo& c) {
  return c.old_level_ns() > 0 ? absl::StrFormat("%.2fx", c.new_level_ns() / c.old_level_ns()) : "-";
}

std::string ShortId(const std::string& id) { return id.empty() ? "-" : id.substr(0, 8); }

absl::StatusOr<int> ChangesList(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kChangesListUsage, "changes list takes no arguments");
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "json" && format != "csv") {
    return UsageError(kChangesListUsage, absl::StrCat("--format: table, json or csv, got \"", EchoValue(format), "\""));
  }
  v1::ListChangesRequest request;
  if (const std::string since = absl::GetFlag(FLAGS_since); !since.empty()) {
    absl::StatusOr<absl::Time> t = changes::ParseSince(since, absl::Now(), "--since");
    if (!t.ok()) return UsageError(kChangesListUsage, std::string(t.status().message()));
    request.set_since_unix_ns(absl::ToUnixNanos(*t));
  }
  request.set_agent(absl::GetFlag(FLAGS_agent));
  request.set_state(absl::GetFlag(FLAGS_state));
  v1::ListChangesResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::ListChanges, request, &response, "changes list");
      !called.ok()) {
    return called;
  }
  if (format == "json") {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    options.add_whitespace = true;
    options.always_print_primitive_fields = true;
    (void)google::protobuf::util::MessageToJsonString(response, &json, options);
    std::cout << json;
    return kExitOk;
  }
  if (format == "csv") {
    std::cout << "change_id,created,agent,case_id,run_id,old_level_ns,new_level_ns,ratio,noise_percent,"
                 "min_change_percent,state,confirmation_run_id,confirmation_median_ns,decided,reason\n";
    for (const v1::ChangeInfo& c : response.changes()) {
      std::cout << c.change_id() << "," << FormatUnixNs(c.created_unix_ns()) << "," << report::CsvField(c.agent_name())
                << "," << report::CsvField(c.case_id()) << "," << c.run_id() << ","
                << report::ShortestDouble(c.old_level_ns()) << "," << report::ShortestDouble(c.new_level_ns()) << ","
                << (c.old_level_ns() > 0 ? report::ShortestDouble(c.new_level_ns() / c.old_level_ns()) : "") << ","
                << (c.has_noise_percent() ? report::ShortestDouble(c.noise_percent()) : "") << ","
                << report::ShortestDouble(c.min_change_percent()) << "," << c.state() << "," << c.confirmation_run_id()
                << "," << (c.has_confirmation_median_ns() ? report::ShortestDouble(c.confirmation_median_ns()) : "")
                << "," << (c.decided_unix_ns() > 0 ? FormatUnixNs(c.decided_unix_ns()) : "") << ","
                << report::CsvField(c.reason()) << "\n";
    }
    return kExitOk;
  }
  report::TextTable table({{"id", report::Align::kRight},
                           {"created"},
                           {"agent"},
                           {"case"},
                           {"old", report::Align::kRight},
                           {"new", report::Align::kRight},
                           {"ratio", report::Align::kRight},
                           {"state"},
                           {"run"},
                           {"confirmation", report::Align::kRight},
                           {"confirmation run"},
                           {"reason"}});
  // Agent names and case ids come from agents: the table escapes control characters.
  for (const v1::ChangeInfo& c : response.changes()) {
    table.AddRow({absl::StrCat(c.change_id()), FormatUnixNs(c.created_unix_ns()), c.agent_name(), c.case_id(),
                  report::FormatNanos(c.old_level_ns()), report::FormatNanos(c.new_level_ns()), Ratio(c), c.state(),
                  ShortId(c.run_id()), Optional(c.has_confirmation_median_ns(), c.confirmation_median_ns()),
                  ShortId(c.confirmation_run_id()), c.reason().empty() ? "-" : c.reason()});
  }
  if (response.changes_size() == 0) {
    std::cout << "no changes\n";
    return kExitOk;
  }
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace

void RegisterChangesCommand(CommandRegistry& registry) {
  registry.Add({.name = "changes list",
                .summary = "list confirmed changes: agent, case, old/new level, state (suspected, confirmed, "
                           "not_reproduced, unconfirmed), confirmation run",
                .usage = kChangesListUsage,
                .run = ChangesList});
}

}  // namespace fleetmark::cli
