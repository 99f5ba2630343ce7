#include "agent/labels.h"

#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/common/message_text.h"
#include "engine/common/text.h"

namespace fleetmark::agent {
namespace {

// The limits the coordinator applies to a hello's labels too.
constexpr size_t kMaxLabels = kMaxAgentLabels;
constexpr size_t kMaxValueLength = kMaxAgentLabelValueBytes;

bool IsValueChar(char c) { return IsAgentLabelValueChar(c); }

std::string_view Std(absl::string_view text) { return std::string_view(text.data(), text.size()); }

template <typename Pred>
bool AllOf(absl::string_view text, Pred pred) {
  for (char c : text) {
    if (!pred(c)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseLabels(absl::string_view text) {
  std::map<std::string, std::string> labels;
  if (absl::StripAsciiWhitespace(text).empty()) return labels;
  std::vector<absl::string_view> items = absl::StrSplit(text, ',');
  if (items.size() > kMaxLabels) {
    return absl::InvalidArgumentError(
        absl::StrCat("labels: at most ", kMaxLabels, " key=value pairs, got ", items.size()));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    absl::string_view item = absl::StripAsciiWhitespace(items[i]);
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels[", i, "]: expected key=value, got \"", EscapeForTerminal(Std(item), 80), "\""));
    }
    absl::string_view key = absl::StripAsciiWhitespace(item.substr(0, eq));
    absl::string_view value = absl::StripAsciiWhitespace(item.substr(eq + 1));
    if (!IsAgentLabelKey(Std(key))) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels[", i, "].key: ", kAgentLabelKeyForm, ", got \"", EscapeForTerminal(Std(key), 80), "\""));
    }
    if (value.size() > kMaxValueLength || !AllOf(value, IsValueChar)) {
      return absl::InvalidArgumentError(absl::StrCat("labels[", i, "].value (key \"", key,
                                                     "\"): ", kAgentLabelValueForm, ", got \"",
                                                     EscapeForTerminal(Std(value), 80), "\""));
    }
    if (!labels.emplace(std::string(key), std::string(value)).second) {
      return absl::InvalidArgumentError(absl::StrCat("labels[", i, "]: key \"", key, "\" given twice"));
    }
  }
  return labels;
}

std::map<std::string, std::string> AutomaticLabels(const fleetmark::v1::HostInfo& host) {
  std::map<std::string, std::string> labels;
  if (!host.has_android()) return labels;
  labels["os"] = "android";
  const std::string& model = host.android().model();
  if (!model.empty() && model != "unknown") {
    std::string value = model.substr(0, kMaxValueLength);
    for (char& c : value) {
      if (!IsValueChar(c)) c = '_';
    }
    labels["model"] = value;
  }
  return labels;
}

std::map<std::string, std::string> WithAutomaticLabels(std::map<std::string, std::string> user,
                                                       const std::map<std::string, std::string>& automatic) {
  for (const auto& [key, value] : automatic) user.emplace(key, value);
  return user;
}

std::string FormatLabels(const std::map<std::string, std::string>& labels) {
  return absl::StrJoin(labels, ",", absl::PairFormatter("="));
}

}  // namespace fleetmark::agent
