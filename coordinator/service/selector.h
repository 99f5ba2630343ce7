// The agent selector language of `fleetmark submit --select` and schedules.
//
// A selector is a comma-separated list of terms that must all hold ("comma = and"):
//   arch=arm64          CPU architecture (arm64 = aarch64, x86_64 = amd64, arm = armv7*)
//   cores>=8            physical cores (also threads = logical CPUs, memory_gib)
//   kind=hybrid         hybrid (several core classes), uniform, smt, or a core class
//                       name such as performance / efficiency that has CPUs the agent
//                       may use (a class "not available here" does not match)
//   label:rack=b        an agent label
//   name=pixel-7        the agent name, case-sensitive; '*', '?' and [...] / [!...] are
//                       wildcards (name=pixel-*); only [A-Za-z0-9._-] otherwise
//   health=any          fleet health: ok (the default), quarantined, or any. Without a
//                       health term a selector admits only agents that are not
//                       quarantined (AdmitsHealth), so submit and schedules skip them;
//                       health takes only `=`.
// Operators: = and != for every key; <, <=, >, >= for the numeric keys. cores and
// threads take whole numbers >= 0, memory_gib a finite number >= 0. Unknown keys
// are errors naming the key and the allowed keys.
//
// `all` matches every agent. It stands alone: `all` with other terms is refused (comma
// means "and", so `all,arch=arm64` would just be `arch=arm64`: say that instead). The
// empty (or blank) selector also matches every agent: stored schedules and runs from
// before `all` existed use it; the CLI asks for `all` explicitly so that an unset shell
// variable does not silently select the whole fleet.
//
//   FLEETMARK_ASSIGN_OR_RETURN(Selector s, Selector::Parse("arch=arm64,cores>=8"));
//   if (s.Matches(name, host, labels)) ...
//
// Thread-safety: immutable after Parse; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/strings/string_view.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::service {

class Selector {
 public:
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe };
  struct Term {
    std::string key;  // arch, cores, threads, memory_gib, kind, name, or label:<k>
    Op op = Op::kEq;
    std::string value;  // normalised (arch aliases, lower case where case-insensitive)
    double number = 0;  // numeric keys
  };

  // The keys a term may use (for error messages and help).
  static constexpr char kAllowedKeys[] = "arch, cores, threads, memory_gib, kind, name, health, label:<key>";

  // The word that selects every agent (case-insensitive).
  static constexpr char kAll[] = "all";

  // The longest selector text accepted (bytes); error messages quote at most
  // kMaxQuotedBytes of a term.
  static constexpr size_t kMaxBytes = 4096;
  static constexpr size_t kMaxQuotedBytes = 80;

  // InvalidArgument naming the term and what is wrong, e.g.
  //   "selector term 2 \"coers>=8\": unknown key \"coers\"; allowed keys: arch, cores, ..."
  // "", blank and `all` give a selector with no terms (matches every agent). Longer than
  // kMaxBytes: "selector: at most 4096 bytes, got N". Quoted input is escaped for a
  // terminal and cut at kMaxQuotedBytes.
  static absl::StatusOr<Selector> Parse(absl::string_view text);

  // Whether the agent's name, host and labels satisfy every term (health aside).
  bool Matches(const std::string& name, const v1::HostInfo& host,
               const std::map<std::string, std::string>& labels) const;

  // Whether an agent of this health is admitted: health=any admits every agent,
  // health=quarantined only quarantined ones, health=ok and no health term only the
  // others.
  bool AdmitsHealth(bool quarantined) const;
  // True when a health term was given (agents list filters by health only then).
  bool has_health_term() const { return !health_.empty(); }

  // The agent name a `name=VALUE` term without wildcard or bracket (Parse refuses any
  // other glob syntax) pins the selection to, if there is one: no agent of another name
  // can match. Lets a submit read one agent instead of the whole fleet.
  std::optional<std::string> ExactName() const;

  // True when it matches every agent ("", blank or `all`).
  bool empty() const { return terms_.empty() && health_.empty(); }
  const std::vector<Term>& terms() const { return terms_; }

 private:
  std::vector<Term> terms_;
  std::string health_;  // "" (no term: ok), "ok", "quarantined" or "any"
};

// "arm64" for aarch64/arm64/armv8*, "x86_64" for x86_64/amd64/x64, "arm" for armv7*/arm,
// otherwise the lower-cased input.
std::string NormalizeArch(absl::string_view arch);

// `submit --queue_offline=DURATION`: a run also selects the matching agents that are
// offline now, and each job expires DURATION after the submit (a job its agent has not
// taken by then fails as infrastructure). The allowed range, checked by the CLI before
// connecting and by the coordinator: InvalidArgument naming `flag` and the range.
inline constexpr absl::Duration kMinQueueOffline = absl::Seconds(1);
inline constexpr absl::Duration kMaxQueueOffline = absl::Hours(24 * 30);
absl::Status CheckQueueOffline(absl::Duration expiry, absl::string_view flag = "--queue_offline");

// A run's or schedule's selector as every table shows it, CLI (`runs list`, `schedules
// list`) and web (the JSON's "selector_text") alike: the selector itself, or
// "(all online)" for the empty one (every online agent; in parentheses, as no
// selector can be spelled so); "(imported: no selector)" for an imported run
// (`results import`), which no selector picked.
std::string SelectorText(absl::string_view selector, bool imported = false);

}  // namespace fleetmark::service
