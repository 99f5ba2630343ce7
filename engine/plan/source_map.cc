#include "engine/plan/source_map.h"

#include "absl/strings/str_cat.h"
#include "fleetmark/v1/plan.pb.h"
#include "google/protobuf/descriptor.h"

namespace fleetmark::engine {

std::string FormatFieldPath(const FieldPath& path) {
  std::string out = "plan";
  for (const PathElement& e : path) {
    absl::StrAppend(&out, ".", e.field);
    if (e.index >= 0) absl::StrAppend(&out, "[", e.index, "]");
  }
  return out;
}

std::optional<SourcePosition> PlanSourceMap::Locate(const FieldPath& path) const {
  using google::protobuf::Descriptor;
  using google::protobuf::FieldDescriptor;
  using google::protobuf::TextFormat;
  const Descriptor* descriptor = v1::Plan::descriptor();
  const TextFormat::ParseInfoTree* tree = tree_.get();
  std::optional<SourcePosition> best;
  for (const PathElement& e : path) {
    if (tree == nullptr || descriptor == nullptr) break;
    const FieldDescriptor* field = descriptor->FindFieldByName(e.field);
    if (field == nullptr) break;
    // Repeated fields are indexed; singular ones use -1 (ParseInfoTree's convention).
    const int index = field->is_repeated() ? std::max(e.index, 0) : -1;
    TextFormat::ParseLocation loc = tree->GetLocation(field, index);
    if (loc.line < 0) break;
    best = SourcePosition{loc.line + 1, loc.column + 1};
    if (field->type() != FieldDescriptor::TYPE_MESSAGE) break;
    tree = tree->GetTreeForNested(field, index);
    descriptor = field->message_type();
  }
  return best;
}

}  // namespace fleetmark::engine
