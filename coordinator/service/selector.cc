#include "coordinator/service/selector.h"

#include <fnmatch.h>

#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/common/text.h"

namespace fleetmark::service {
namespace {

struct OpText {
  absl::string_view text;
  Selector::Op op;
};
// Two-character operators first so ">=" is not read as ">".
constexpr std::array<OpText, 6> kOps = {{{"!=", Selector::Op::kNe},
                                         {">=", Selector::Op::kGe},
                                         {"<=", Selector::Op::kLe},
                                         {"=", Selector::Op::kEq},
                                         {">", Selector::Op::kGt},
                                         {"<", Selector::Op::kLt}}};

bool IsNumericKey(absl::string_view key) { return key == "cores" || key == "threads" || key == "memory_gib"; }

bool Compare(double lhs, Selector::Op op, double rhs) {
  switch (op) {
    case Selector::Op::kEq:
      return lhs == rhs;
    case Selector::Op::kNe:
      return lhs != rhs;
    case Selector::Op::kLt:
      return lhs < rhs;
    case Selector::Op::kLe:
      return lhs <= rhs;
    case Selector::Op::kGt:
      return lhs > rhs;
    case Selector::Op::kGe:
      return lhs >= rhs;
  }
  return false;
}

bool KindMatches(const v1::HostInfo& host, const std::string& kind) {
  const int classes = std::max(host.core_classes_size(), host.core_kinds_size());
  if (kind == "hybrid") return classes >= 2;
  if (kind == "uniform") return classes <= 1;
  if (kind == "smt") return host.smt();
  for (const auto& c : host.core_classes()) {
    // A class the agent may not use (every CPU outside its allowed set) is not one it has.
    if (c.cpus_size() == 0 && c.machine_cpus_size() > 0) continue;
    if (absl::AsciiStrToLower(c.name()) == kind) return true;
  }
  for (const auto& c : host.core_kinds()) {
    if (absl::AsciiStrToLower(c.name()) == kind) return true;
  }
  return false;
}

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

// Whether `value` is an agent name or a glob over the name alphabet: name characters,
// '*', '?', and well-formed bracket expressions [...] / [!...] whose items are name
// characters or ranges a-z with a <= z ('-' first or last is literal).
bool IsNamePattern(absl::string_view value) {
  size_t i = 0;
  while (i < value.size()) {
    const char c = value[i];
    if (IsNameChar(c) || c == '*' || c == '?') {
      ++i;
      continue;
    }
    if (c != '[') return false;
    ++i;
    if (i < value.size() && value[i] == '!') ++i;
    bool any = false;
    while (i < value.size() && value[i] != ']') {
      if (!IsNameChar(value[i])) return false;
      if (i + 2 < value.size() && value[i + 1] == '-' && value[i + 2] != ']') {
        if (!IsNameChar(value[i + 2]) || value[i] > value[i + 2]) return false;
        i += 3;
      } else {
        ++i;
      }
      any = true;
    }
    if (i >= value.size() || !any) return false;  // unclosed or empty bracket
    ++i;
  }
  return true;
}

}  // namespace

std::string NormalizeArch(absl::string_view arch) {
  std::string a = absl::AsciiStrToLower(arch);
  if (a == "aarch64" || a == "arm64" || absl::StartsWith(a, "armv8")) return "arm64";
  if (a == "x86_64" || a == "amd64" || a == "x64") return "x86_64";
  if (a == "arm" || absl::StartsWith(a, "armv7") || absl::StartsWith(a, "armv6")) return "arm";
  return a;
}

absl::StatusOr<Selector> Selector::Parse(absl::string_view text) {
  Selector selector;
  if (absl::StripAsciiWhitespace(text).empty()) return selector;
  if (text.size() > kMaxBytes) {
    return absl::InvalidArgumentError(absl::StrCat("selector: at most ", kMaxBytes, " bytes, got ", text.size()));
  }
  const auto quoted = [](absl::string_view t) {
    return EscapeForTerminal(std::string_view(t.data(), t.size()), kMaxQuotedBytes);
  };
  const std::vector<absl::string_view> raw_terms = absl::StrSplit(text, ',');
  int index = 0;
  for (absl::string_view raw : raw_terms) {
    ++index;
    const absl::string_view term_text = absl::StripAsciiWhitespace(raw);
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("selector term ", index, " \"", quoted(term_text), "\": ", what));
    };
    if (term_text.empty()) return error("empty term (two commas, or a trailing comma?)");
    if (absl::EqualsIgnoreCase(term_text, kAll)) {
      if (raw_terms.size() == 1) return selector;
      return error(absl::StrCat("\"", kAll,
                                "\" selects every agent and stands alone; "
                                "drop it (comma means and: the other terms already select)"));
    }
    size_t pos = absl::string_view::npos;
    const OpText* found = nullptr;
    for (const OpText& op : kOps) {
      size_t p = term_text.find(op.text);
      if (p != absl::string_view::npos && (p < pos || (p == pos && op.text.size() > found->text.size()))) {
        pos = p;
        found = &op;
      }
    }
    if (found == nullptr) return error("expected KEY=VALUE (operators: = != < <= > >=), or `all` alone");
    Term term;
    term.key = std::string(absl::StripAsciiWhitespace(term_text.substr(0, pos)));
    term.op = found->op;
    term.value = std::string(absl::StripAsciiWhitespace(term_text.substr(pos + found->text.size())));
    if (term.key.empty()) return error("missing key before the operator");
    if (term.value.empty()) return error("missing value after the operator");
    if (absl::string_view("=!<>").find(term.value.front()) != absl::string_view::npos) {
      // "arch==x86_64" would otherwise compare with the value "=x86_64" and match nothing.
      const size_t end = term_text.find_first_not_of("=!<> ", pos);
      return error(
          absl::StrCat("malformed operator \"", term_text.substr(pos, end - pos), "\"; operators: = != < <= > >="));
    }
    const bool is_label = absl::StartsWith(term.key, "label:");
    if (is_label && term.key.size() == 6) return error("label: needs a label name, e.g. label:rack=b");
    if (term.key == "health") {
      const std::string value = absl::AsciiStrToLower(term.value);
      if (term.op != Op::kEq) return error("health takes only = (health=ok, health=quarantined or health=any)");
      if (value != "ok" && value != "quarantined" && value != "any") {
        return error(absl::StrCat("health is ok, quarantined or any, got \"", quoted(term.value), "\""));
      }
      if (!selector.health_.empty()) return error("health given twice");
      selector.health_ = value;
      continue;
    }
    const bool known =
        is_label || IsNumericKey(term.key) || term.key == "arch" || term.key == "kind" || term.key == "name";
    if (!known) {
      return error(absl::StrCat("unknown key \"", quoted(term.key), "\"; allowed keys: ", kAllowedKeys));
    }
    if (term.key == "memory_gib") {
      // Decimal only, digits first: no sign (not even -0), no inf/nan/hex; overflow is inf.
      if ((!absl::ascii_isdigit(static_cast<unsigned char>(term.value.front())) && term.value.front() != '.') ||
          term.value.find_first_not_of("0123456789.eE+-") != std::string::npos) {
        term.number = -1;
      } else if (!absl::SimpleAtod(term.value, &term.number) || !std::isfinite(term.number)) {
        term.number = -1;
      }
      if (term.number < 0) {
        return error(absl::StrCat("memory_gib takes a finite number >= 0, got \"", quoted(term.value), "\""));
      }
    } else if (IsNumericKey(term.key)) {
      int32_t whole = -1;
      if (term.value.find_first_not_of("0123456789") != std::string::npos || !absl::SimpleAtoi(term.value, &whole)) {
        whole = -1;
      }
      if (whole < 0) {
        return error(absl::StrCat(term.key, " takes a whole number >= 0 (at most ", INT32_MAX, "), got \"",
                                  quoted(term.value), "\""));
      }
      term.number = whole;
    } else if (term.op != Op::kEq && term.op != Op::kNe) {
      return error(absl::StrCat(term.key, " takes only = or != (it is not a number)"));
    }
    if (term.key == "name" && !IsNamePattern(term.value)) {
      return error(
          absl::StrCat("name takes an agent name or a glob over [A-Za-z0-9._-] with *, ? and [...] / [!...], "
                       "got \"",
                       quoted(term.value), "\""));
    }
    if (term.key == "arch") term.value = NormalizeArch(term.value);
    if (term.key == "kind") term.value = absl::AsciiStrToLower(term.value);
    selector.terms_.push_back(std::move(term));
  }
  return selector;
}

std::optional<std::string> Selector::ExactName() const {
  for (const Term& t : terms_) {
    if (t.key == "name" && t.op == Op::kEq && t.value.find_first_of("*?[") == std::string::npos) return t.value;
  }
  return std::nullopt;
}

bool Selector::Matches(const std::string& name, const v1::HostInfo& host,
                       const std::map<std::string, std::string>& labels) const {
  for (const Term& t : terms_) {
    bool match = false;
    if (t.key == "cores") {
      match = Compare(host.physical_cores(), t.op, t.number);
    } else if (t.key == "threads") {
      match = Compare(host.logical_cpus(), t.op, t.number);
    } else if (t.key == "memory_gib") {
      match = Compare(static_cast<double>(host.memory_bytes()) / (1ull << 30), t.op, t.number);
    } else {
      bool equal = false;
      if (t.key == "arch") {
        equal = NormalizeArch(host.arch()) == t.value;
      } else if (t.key == "kind") {
        equal = KindMatches(host, t.value);
      } else if (t.key == "name") {
        equal = fnmatch(t.value.c_str(), name.c_str(), 0) == 0;
      } else {
        auto it = labels.find(t.key.substr(6));
        equal = it != labels.end() && fnmatch(t.value.c_str(), it->second.c_str(), 0) == 0;
      }
      match = t.op == Op::kEq ? equal : !equal;
    }
    if (!match) return false;
  }
  return true;
}

absl::Status CheckQueueOffline(absl::Duration expiry, absl::string_view flag) {
  if (expiry < kMinQueueOffline || expiry > kMaxQueueOffline) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": how long jobs wait for offline agents, ", absl::FormatDuration(kMinQueueOffline), " to ",
                     absl::FormatDuration(kMaxQueueOffline), " (e.g. 24h), got ", absl::FormatDuration(expiry)));
  }
  return absl::OkStatus();
}

bool Selector::AdmitsHealth(bool quarantined) const {
  if (health_ == "any") return true;
  if (health_ == "quarantined") return quarantined;
  return !quarantined;
}

std::string SelectorText(absl::string_view selector, bool imported) {
  if (imported) return "(imported: no selector)";
  return selector.empty() ? "(all online)" : std::string(selector);
}

}  // namespace fleetmark::service
