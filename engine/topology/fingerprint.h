// The device fingerprint: everything that can change a number on a device (CPU model and
// core classes, allowed CPUs and quota, memory, kernel, OS build, governor, engine
// version, compiler and flags, emulation), as one v1::DeviceFingerprint with a stable
// hash. The one place that builds, hashes and diffs fingerprints: the agent and the local
// `fleetmark run` attach one to every result, the coordinator diffs them (compare,
// History).
//
//   *result.mutable_fingerprint() = DeviceFingerprintOf(host, result);
//   for (const FingerprintChange& c : DiffFingerprints(old_fp, new_fp)) ...  // "kernel a → b"
//
// Pure functions over protos, thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fleetmark/v1/host.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// One field of a fingerprint as shown to people: `name` is its short label ("kernel",
// "governor", "allowed cpus", ...), `value` its canonical text (memory in MiB, quota in
// CPUs, emulated "yes"/"no", "" = unknown).
struct FingerprintField {
  std::string name;
  std::string value;
};

// Every field of `fp` except the hash, in a fixed order (the hash's order).
std::vector<FingerprintField> FingerprintFields(const v1::DeviceFingerprint& fp);

// FNV-1a 64 (Fowler–Noll–Vo) of "name=value\n" over FingerprintFields, as 16 lowercase
// hex digits. Ignores fp.hash. Stable across builds and architectures.
std::string FingerprintHash(const v1::DeviceFingerprint& fp);

// The fingerprint of `host` as it was when `result` was measured: the result's own
// limits (allowed CPUs, quota, memory limit) and governor at the case's start
// (env_before) when it has them, else the host's; this build's engine version, compiler
// and flags; hash set.
v1::DeviceFingerprint DeviceFingerprintOf(const v1::HostInfo& host, const v1::CaseResult& result);

// The fingerprint of `host` alone (its own limits and governor); hash set.
v1::DeviceFingerprint DeviceFingerprintOf(const v1::HostInfo& host);

// A field whose value differs between two fingerprints.
struct FingerprintChange {
  std::string field;   // FingerprintField::name
  std::string before;  // value in `a`
  std::string after;   // value in `b`
};

// The fields that differ from `a` to `b`, in FingerprintFields' order; empty when equal.
std::vector<FingerprintChange> DiffFingerprints(const v1::DeviceFingerprint& a, const v1::DeviceFingerprint& b);

// "kernel 6.1.0-18 → 6.1.0-21; governor powersave → performance" ("" for no change; an
// empty value shows as "?").
std::string DescribeChanges(const std::vector<FingerprintChange>& changes);

// One fingerprint field across several sides (compare's devices).
struct FingerprintRow {
  std::string field;                // FingerprintField::name
  std::vector<std::string> values;  // per side; "unknown" for a side without a fingerprint
};

// The fields whose values differ between the sides that have a fingerprint (hash not
// empty), in FingerprintFields' order; empty when fewer than two sides have one or all
// agree. Sides without one show "unknown" and are not compared.
std::vector<FingerprintRow> DifferingFingerprintFields(const std::vector<v1::DeviceFingerprint>& sides);

// The fingerprint most of `results` were measured under (ties: the earliest), or an
// empty one when none has a fingerprint; *distinct (if given) = how many different ones.
v1::DeviceFingerprint PrevailingFingerprint(const std::vector<const v1::CaseResult*>& results, int* distinct = nullptr);

// The fingerprint a device's `results` were measured under: the prevailing one
// (PrevailingFingerprint), else `own` (the device's or report's fingerprint, used when no
// result carries one). One rule for every reader of results files (compare/map/recommend
// --results) and `fleetmark results import`.
v1::DeviceFingerprint MeasuredFingerprint(const google::protobuf::RepeatedPtrField<v1::CaseResult>& results,
                                          const v1::DeviceFingerprint& own);

// The compiler and flags of this build ("GCC 12.2.0", "-O3 -DNDEBUG").
std::string BuildCompiler();
std::string BuildCompilerFlags();

}  // namespace fleetmark::engine
