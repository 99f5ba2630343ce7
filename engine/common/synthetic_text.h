// How the synthetic workload's parameters (plan.proto's SyntheticParams) are written in
// case ids and map rows: "name=value" per parameter, in field order. One definition for
// the plan's case ids (engine/plan/sweep.h) and the strategy map (engine/report).
// Header-only over the generated message; pure, thread-safe.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleetmark/v1/plan.pb.h"
#include "google/protobuf/descriptor.h"

namespace fleetmark::engine {

// The workload that takes SyntheticParams and sweeps.
inline constexpr char kSyntheticWorkload[] = "synthetic";

// "name=value" for each field of `params`, in field order, that is in `swept` (when
// `with_swept`) or not at its default (0, "", wait_distribution "fixed"); a swept
// field is left out when !with_swept, whatever its value.
inline std::vector<std::string> SyntheticParamTexts(const v1::SyntheticParams& params,
                                                    const std::vector<std::string>& swept, bool with_swept) {
  std::vector<std::string> out;
  const google::protobuf::Descriptor* descriptor = v1::SyntheticParams::descriptor();
  const google::protobuf::Reflection* reflection = v1::SyntheticParams::GetReflection();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(f);
    const bool is_swept = std::find(swept.begin(), swept.end(), field->name()) != swept.end();
    if (is_swept && !with_swept) continue;
    std::string value;
    switch (field->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT32:
        value = absl::StrCat(reflection->GetUInt32(params, field));
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
        value = absl::StrCat(reflection->GetUInt64(params, field));
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
        value = reflection->GetString(params, field);
        if (value == "fixed") value.clear();  // the default distribution
        break;
      default:
        continue;
    }
    const bool is_default = value.empty() || value == "0";
    if (is_default && !is_swept) continue;
    out.push_back(absl::StrCat(field->name(), "=", value));
  }
  return out;
}

// The workload as case ids and tables show it: "synthetic" followed by
// SyntheticParamTexts in brackets, "synthetic[cpu_ns=1000,wait_us=316]"; just
// "synthetic" when that list is empty.
inline std::string SyntheticWorkloadText(const v1::SyntheticParams& params, const std::vector<std::string>& swept,
                                         bool with_swept) {
  const std::vector<std::string> parts = SyntheticParamTexts(params, swept, with_swept);
  if (parts.empty()) return kSyntheticWorkload;
  std::string out = absl::StrCat(kSyntheticWorkload, "[");
  for (size_t i = 0; i < parts.size(); ++i) absl::StrAppend(&out, i == 0 ? "" : ",", parts[i]);
  return out + "]";
}

}  // namespace fleetmark::engine
