#include "coordinator/cli/command.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetmark::cli {

void CommandRegistry::Add(Command command) {
  for (Command& existing : commands_) {
    if (existing.name == command.name) {
      existing = std::move(command);
      return;
    }
  }
  commands_.push_back(std::move(command));
}

const Command* CommandRegistry::Find(const std::vector<std::string>& args,
                                     int* words_used) const {
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
  std::sort(sorted.begin(), sorted.end(),
            [](const Command* a, const Command* b) { return a->name < b->name; });
  std::string out =
      "fleetmark: benchmark concurrency strategies × workloads, locally or on a fleet.\n\n"
      "usage: fleetmark COMMAND [ARGS] [FLAGS]\n"
      "       fleetmark help [COMMAND]   (one command's usage)\n"
      "       fleetmark --help           (this text and every flag)\n\n"
      "commands:\n";
  size_t width = 0;
  for (const Command* c : sorted) width = std::max(width, c->name.size());
  for (const Command* c : sorted) {
    absl::StrAppend(&out, "  ", c->name, std::string(width - c->name.size() + 2, ' '),
                    c->summary, "\n");
  }
  absl::StrAppend(&out, "\nexit codes: 0 success, 1 the command failed, 2 bad input "
                        "(unknown command or flag, invalid plan, ...)\n");
  return out;
}

}  // namespace fleetmark::cli
