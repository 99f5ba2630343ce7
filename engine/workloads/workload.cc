// The five S1 workloads (docs/architecture.md, "Workloads") and their factory.
#include "engine/workloads/workload.h"

#include <bit>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/common/registry.h"
#include "engine/workloads/synthetic.h"
#include "engine/workloads/task_values.h"

namespace fleetmark::engine {
namespace {

uint64_t ArithmeticSink(int i) { return static_cast<uint32_t>(ArithmeticValue(i)); }

uint64_t CollectionsSink(int i) {
  const CollectionsResult r = CollectionsValue(i);
  return r.kept ^ std::bit_cast<uint64_t>(r.sum);
}

absl::Duration StorageWait(int i) { return absl::Microseconds(500 + 10 * int64_t{i}); }
absl::Duration NetworkWait(int i) { return absl::Milliseconds(i); }

class EmptyWorkload final : public Workload {
 public:
  std::string_view name() const override { return "empty"; }
  uint64_t Compute(int i) const override { return static_cast<uint64_t>(i); }
  absl::Duration Wait(int) const override { return absl::ZeroDuration(); }
};

class ArithmeticWorkload final : public Workload {
 public:
  std::string_view name() const override { return "arithmetic"; }
  uint64_t Compute(int i) const override { return ArithmeticSink(i); }
  absl::Duration Wait(int) const override { return absl::ZeroDuration(); }
};

class CollectionsWorkload final : public Workload {
 public:
  std::string_view name() const override { return "collections"; }
  uint64_t Compute(int i) const override { return CollectionsSink(i); }
  absl::Duration Wait(int) const override { return absl::ZeroDuration(); }
};

class StorageWorkload final : public Workload {
 public:
  std::string_view name() const override { return "storage"; }
  uint64_t Compute(int) const override { return 0; }
  absl::Duration Wait(int i) const override { return StorageWait(i); }
};

class NetworkWorkload final : public Workload {
 public:
  std::string_view name() const override { return "network"; }
  uint64_t Compute(int) const override { return 0; }
  absl::Duration Wait(int i) const override { return NetworkWait(i); }
};

// i%5==0 network, else i%3==0 storage, else i%2==0 collections, else arithmetic.
class MixedWorkload final : public Workload {
 public:
  std::string_view name() const override { return "mixed"; }
  uint64_t Compute(int i) const override {
    if (i % 5 == 0 || i % 3 == 0) return 0;
    return i % 2 == 0 ? CollectionsSink(i) : ArithmeticSink(i);
  }
  absl::Duration Wait(int i) const override {
    if (i % 5 == 0) return NetworkWait(i);
    if (i % 3 == 0) return StorageWait(i);
    return absl::ZeroDuration();
  }
};

}  // namespace

std::unique_ptr<Workload> MakeEmptyWorkload() { return std::make_unique<EmptyWorkload>(); }

absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(std::string_view name, const v1::SyntheticParams& synthetic) {
  if (name == "arithmetic") return std::make_unique<ArithmeticWorkload>();
  if (name == "collections") return std::make_unique<CollectionsWorkload>();
  if (name == "storage") return std::make_unique<StorageWorkload>();
  if (name == "network") return std::make_unique<NetworkWorkload>();
  if (name == "mixed") return std::make_unique<MixedWorkload>();
  if (name == "synthetic") return MakeSyntheticWorkload(synthetic);
  return absl::InvalidArgumentError(
      absl::StrCat("workload: unknown name \"", std::string(name), "\"; allowed: ",
                   absl::StrJoin(kWorkloads, ", ", [](std::string* out, const NameInfo& w) { out->append(w.name); })));
}

}  // namespace fleetmark::engine
