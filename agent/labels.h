// Agent labels: free-form key=value tags (`--labels rack=b,os=android`) that selectors
// match with `label:<key>=<value>`.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto labels, ParseLabels("rack=b,os=android"));
#pragma once

#include <map>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::agent {

// Parses a comma-separated list of `key=value` pairs. Whitespace around items, keys
// and values is trimmed; an empty text gives no labels. Keys: [A-Za-z0-9._-]{1,63};
// values: [A-Za-z0-9._:/+-]{0,63}; at most 64 labels; a key may appear once.
// Returns InvalidArgument naming the item, its position and the allowed form.
// Thread-safe (pure function).
absl::StatusOr<std::map<std::string, std::string>> ParseLabels(absl::string_view text);

// Formats labels back as `k=v,k=v` (sorted by key). Pure function.
std::string FormatLabels(const std::map<std::string, std::string>& labels);

// Labels the agent adds from its host: on Android `os=android` and `model=<model>`
// (ro.product.model with every character outside the value alphabet as '_', at most 63;
// none when unknown). Pure function.
std::map<std::string, std::string> AutomaticLabels(const fleetmark::v1::HostInfo& host);

// `user` plus every automatic label whose key the user did not give (user labels win).
// Pure function.
std::map<std::string, std::string> WithAutomaticLabels(std::map<std::string, std::string> user,
                                                       const std::map<std::string, std::string>& automatic);

}  // namespace fleetmark::agent
