// The agent's log: one line per event on stderr, "<UTC time> <LEVEL> <message>".
// Thread-safe (one write(2) per line). Control and format characters in a message are
// escaped (EscapeForTerminal, engine/common/text.h). Used by the agent library and main only.
#pragma once

#include "absl/strings/string_view.h"

namespace fleetmark::agent {

enum class LogLevel { kInfo, kWarning, kError };

void Log(LogLevel level, absl::string_view message);

}  // namespace fleetmark::agent
