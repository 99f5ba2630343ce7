#include "coordinator/cli/command.h"

#include <algorithm>
#include <cctype>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "engine/common/name_rule.h"
#include "engine/common/text.h"

namespace fleetmark::cli {

absl::Status CheckRequestText(std::string_view what, std::string_view value) {
  if (IsValidUtf8(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(what), ": not valid UTF-8 (text sent to the coordinator must be UTF-8), got \"",
                   EchoValue(value), "\""));
}

absl::Status CheckNameArgument(std::string_view what, std::string_view value) {
  if (IsName(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(NameRuleMessage(what, value));
}

namespace {

// The bytes at the end of `text` that begin a UTF-8 character not yet complete (a
// stream write may end inside one): kept until the rest arrives.
size_t IncompleteUtf8Tail(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const unsigned char c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

}  // namespace

// Collects what std::cerr is given and writes it on each flush (std::cerr flushes after
// every output operation), escaped, to the buffer std::cerr had before.
class TerminalSafeStderr::Buffer : public std::streambuf {
 public:
  explicit Buffer(std::streambuf* out) : out_(out) {}
  ~Buffer() override { Emit(/*all=*/true); }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) pending_.push_back(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    return n;
  }
  int sync() override {
    Emit(/*all=*/false);
    return out_->pubsync();
  }

 private:
  void Emit(bool all) {
    const size_t ready = pending_.size() - (all ? 0 : IncompleteUtf8Tail(pending_));
    std::string out;
    size_t start = 0;
    while (start < ready) {
      size_t newline = pending_.find('\n', start);
      if (newline == std::string::npos || newline >= ready) newline = ready;
      absl::StrAppend(&out, EscapeForTerminal(std::string_view(pending_).substr(start, newline - start)));
      if (newline < ready) out.push_back('\n');
      start = newline + 1;
    }
    pending_.erase(0, ready);
    if (!out.empty()) out_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
  }

  std::streambuf* out_;
  std::string pending_;
};

TerminalSafeStderr::TerminalSafeStderr()
    : buffer_(std::make_unique<Buffer>(std::cerr.rdbuf())), previous_(std::cerr.rdbuf(buffer_.get())) {}

TerminalSafeStderr::~TerminalSafeStderr() {
  std::cerr.flush();
  std::cerr.rdbuf(previous_);
  buffer_.reset();
  previous_->pubsync();
}

std::vector<std::string> CommandRegistry::FlagsOf(const Command& command) {
  std::vector<std::string> flags = command.common_flags;
  const std::string& usage = command.usage;
  for (size_t at = usage.find("--"); at != std::string::npos; at = usage.find("--", at)) {
    size_t end = at + 2;
    while (end < usage.size() && (std::islower(static_cast<unsigned char>(usage[end])) ||
                                  std::isdigit(static_cast<unsigned char>(usage[end])) || usage[end] == '_')) {
      ++end;
    }
    if (end > at + 2) flags.push_back(usage.substr(at + 2, end - at - 2));
    at = end;
  }
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  return flags;
}

void CommandRegistry::Add(Command command) {
  command.common_flags.insert(command.common_flags.end(), common_flags_.begin(), common_flags_.end());
  for (Command& existing : commands_) {
    if (existing.name == command.name) {
      existing = std::move(command);
      return;
    }
  }
  commands_.push_back(std::move(command));
}

const Command* CommandRegistry::Find(const std::vector<std::string>& args, int* words_used) const {
  const Command* best = nullptr;
  size_t best_words = 0;
  for (const Command& command : commands_) {
    std::vector<std::string> words = absl::StrSplit(command.name, ' ', absl::SkipEmpty());
    if (words.empty() || words.size() > args.size() || words.size() <= best_words) continue;
    if (std::equal(words.begin(), words.end(), args.begin())) {
      best = &command;
      best_words = words.size();
    }
  }
  if (words_used != nullptr) *words_used = static_cast<int>(best_words);
  return best;
}

std::string CommandRegistry::Usage() const {
  std::vector<const Command*> sorted;
  for (const Command& c : commands_) sorted.push_back(&c);
  std::sort(sorted.begin(), sorted.end(), [](const Command* a, const Command* b) { return a->name < b->name; });
  std::string out =
      "fleetmark: benchmark concurrency strategies × workloads, locally or on a fleet.\n\n"
      "usage: fleetmark COMMAND [ARGS] [FLAGS]\n"
      "       fleetmark help COMMAND    (one command's usage and flags; also COMMAND --help)\n"
      "       fleetmark --help           (this text and every flag)\n\n"
      "commands:\n";
  size_t width = 0;
  for (const Command* c : sorted) width = std::max(width, c->name.size());
  for (const Command* c : sorted) {
    absl::StrAppend(&out, "  ", c->name, std::string(width - c->name.size() + 2, ' '), c->summary, "\n");
  }
  absl::StrAppend(&out,
                  "\nexit codes: 0 success; 1 the command failed (server error, results not "
                  "written, ...);\n  2 bad input (unknown command or flag, invalid plan, ...); "
                  "3 run, submit --wait: finished but some\n  case failed (status failed or timeout; "
                  "resource_exhausted and unsupported are outcomes, not failures);\n  5 the coordinator "
                  "(or its database) unreachable or not answering in time: try again later;\n  130 interrupted "
                  "(SIGINT), 143 terminated (SIGTERM): results so far are still written\n");
  return out;
}

}  // namespace fleetmark::cli
