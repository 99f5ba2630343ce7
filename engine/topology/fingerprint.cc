#include "engine/topology/fingerprint.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "engine/common/version.h"
#include "engine/topology/placement_spec.h"

#ifndef FLEETMARK_CXX_FLAGS
#define FLEETMARK_CXX_FLAGS ""
#endif

namespace fleetmark::engine {
namespace {

std::string CpuList(const google::protobuf::RepeatedField<uint32_t>& ids) {
  return FormatCpuList(CpuSet(ids.begin(), ids.end()));
}

std::string CoreClassesText(const v1::HostInfo& host) {
  std::vector<std::string> parts;
  for (const v1::CoreKind& k : host.core_classes()) {
    const std::string mhz = k.max_frequency_khz() == 0 ? "?" : absl::StrCat(k.max_frequency_khz() / 1000);
    // The machine's CPUs of the class (hosts recorded before machine_cpus: cpus).
    parts.push_back(absl::StrCat(k.name(), " ", CpuList(k.machine_cpus_size() > 0 ? k.machine_cpus() : k.cpus()), " @ ",
                                 mhz, " MHz"));
  }
  return absl::StrJoin(parts, "; ");
}

// allowed_cpu_list, or in a fingerprint stored before it the deprecated allowed_cpus.
std::string AllowedCpuList(const v1::DeviceFingerprint& fp) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return fp.allowed_cpu_list().empty() ? fp.allowed_cpus() : fp.allowed_cpu_list();
#pragma GCC diagnostic pop
}

std::string Mib(uint64_t bytes) { return bytes == 0 ? "" : absl::StrCat(bytes / (1024 * 1024), " MiB"); }

v1::DeviceFingerprint FromHost(const v1::HostInfo& host, const v1::ResourceLimits& limits,
                               const std::string& governor) {
  v1::DeviceFingerprint fp;
  fp.set_cpu_model(host.cpu_model());
  fp.set_arch(host.arch());
  fp.set_core_classes(CoreClassesText(host));
  fp.set_allowed_cpu_list(CpuList(limits.allowed_cpu_ids()));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  fp.set_allowed_cpus(fp.allowed_cpu_list());  // the deprecated name, for older readers
#pragma GCC diagnostic pop
  fp.set_cpu_quota(limits.cpu_quota());
  fp.set_memory_bytes(host.memory_bytes());
  fp.set_memory_limit_bytes(limits.memory_limit_bytes());
  fp.set_kernel(host.kernel());
  const std::string& android = host.android().fingerprint();
  fp.set_os_build(!android.empty() && android != "unknown" ? android : host.os());
  fp.set_governor(governor);
  fp.set_engine_version(absl::StrCat(FLEETMARK_ENGINE_VERSION, " (commit ", BuildCommit(), ")"));
  fp.set_compiler(BuildCompiler());
  fp.set_compiler_flags(BuildCompilerFlags());
  fp.set_emulated(host.emulated());
  fp.set_hash(FingerprintHash(fp));
  return fp;
}

}  // namespace

std::string BuildCompiler() {
#if defined(__clang__)
  return absl::StrCat("Clang ", __clang_major__, ".", __clang_minor__, ".", __clang_patchlevel__);
#elif defined(__GNUC__)
  return absl::StrCat("GCC ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

std::string BuildCompilerFlags() { return std::string(absl::StripAsciiWhitespace(FLEETMARK_CXX_FLAGS)); }

std::vector<FingerprintField> FingerprintFields(const v1::DeviceFingerprint& fp) {
  const std::string quota = fp.cpu_quota() > 0 ? absl::StrFormat("%.2f CPUs", fp.cpu_quota()) : "none";
  const std::string limit = fp.memory_limit_bytes() > 0 ? Mib(fp.memory_limit_bytes()) : "none";
  return {{"cpu", fp.cpu_model()},
          {"arch", fp.arch()},
          {"core classes", fp.core_classes()},
          {"allowed cpus", AllowedCpuList(fp)},
          {"cpu quota", quota},
          {"memory", Mib(fp.memory_bytes())},
          {"memory limit", limit},
          {"kernel", fp.kernel()},
          {"os build", fp.os_build()},
          {"governor", fp.governor()},
          {"engine", fp.engine_version()},
          {"compiler", fp.compiler()},
          {"compiler flags", fp.compiler_flags()},
          {"emulated", fp.emulated() ? "yes" : "no"}};
}

std::string FingerprintHash(const v1::DeviceFingerprint& fp) {
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 offset basis
  for (const FingerprintField& f : FingerprintFields(fp)) {
    for (const std::string* part : {&f.name, &f.value}) {
      for (unsigned char c : *part) {
        h ^= c;
        h *= 1099511628211ULL;  // FNV prime
      }
      h ^= static_cast<unsigned char>(part == &f.name ? '=' : '\n');
      h *= 1099511628211ULL;
    }
  }
  return absl::StrFormat("%016x", h);
}

v1::DeviceFingerprint DeviceFingerprintOf(const v1::HostInfo& host, const v1::CaseResult& result) {
  const v1::ResourceLimits& limits = result.has_limits() ? result.limits() : host.limits();
  const std::string& governor =
      result.env_before().governor().empty() ? host.governor() : result.env_before().governor();
  return FromHost(host, limits, governor);
}

v1::DeviceFingerprint DeviceFingerprintOf(const v1::HostInfo& host) {
  return FromHost(host, host.limits(), host.governor());
}

std::vector<FingerprintChange> DiffFingerprints(const v1::DeviceFingerprint& a, const v1::DeviceFingerprint& b) {
  const std::vector<FingerprintField> fa = FingerprintFields(a);
  const std::vector<FingerprintField> fb = FingerprintFields(b);
  std::vector<FingerprintChange> changes;
  for (size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
    if (fa[i].value != fb[i].value) changes.push_back({fa[i].name, fa[i].value, fb[i].value});
  }
  return changes;
}

std::vector<FingerprintRow> DifferingFingerprintFields(const std::vector<v1::DeviceFingerprint>& sides) {
  std::vector<std::vector<FingerprintField>> fields;
  int known = 0;
  for (const v1::DeviceFingerprint& fp : sides) {
    fields.push_back(FingerprintFields(fp));
    if (!fp.hash().empty()) ++known;
  }
  std::vector<FingerprintRow> rows;
  if (known < 2) return rows;
  for (size_t f = 0; f < fields.front().size(); ++f) {
    FingerprintRow row{fields.front()[f].name, {}};
    const std::string* first = nullptr;
    bool differs = false;
    for (size_t i = 0; i < sides.size(); ++i) {
      if (sides[i].hash().empty()) {
        row.values.push_back("unknown");
        continue;
      }
      const std::string& value = fields[i][f].value;
      row.values.push_back(value);
      if (first == nullptr) first = &value;
      differs = differs || value != *first;
    }
    if (differs) rows.push_back(std::move(row));
  }
  return rows;
}

v1::DeviceFingerprint PrevailingFingerprint(const std::vector<const v1::CaseResult*>& results, int* distinct) {
  std::vector<std::pair<const v1::DeviceFingerprint*, int>> counts;  // first-seen order
  for (const v1::CaseResult* r : results) {
    if (r == nullptr || r->fingerprint().hash().empty()) continue;
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& c) { return c.first->hash() == r->fingerprint().hash(); });
    if (it == counts.end()) {
      counts.emplace_back(&r->fingerprint(), 1);
    } else {
      ++it->second;
    }
  }
  if (distinct != nullptr) *distinct = static_cast<int>(counts.size());
  const std::pair<const v1::DeviceFingerprint*, int>* best = nullptr;
  for (const auto& c : counts) {
    if (best == nullptr || c.second > best->second) best = &c;
  }
  return best == nullptr ? v1::DeviceFingerprint() : *best->first;
}

v1::DeviceFingerprint MeasuredFingerprint(const google::protobuf::RepeatedPtrField<v1::CaseResult>& results,
                                          const v1::DeviceFingerprint& own) {
  std::vector<const v1::CaseResult*> pointers;
  pointers.reserve(results.size());
  for (const v1::CaseResult& r : results) pointers.push_back(&r);
  v1::DeviceFingerprint prevailing = PrevailingFingerprint(pointers);
  return prevailing.hash().empty() ? own : prevailing;
}

std::string DescribeChanges(const std::vector<FingerprintChange>& changes) {
  return absl::StrJoin(changes, "; ", [](std::string* out, const FingerprintChange& c) {
    absl::StrAppend(out, c.field, " ", c.before.empty() ? "?" : c.before, " → ", c.after.empty() ? "?" : c.after);
  });
}

}  // namespace fleetmark::engine
