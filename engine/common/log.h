// The daemons' log (fleetmark-agent, fleetmark-coordinator): one line per event on
// stderr, "<RFC 3339 UTC time, ms> <LEVEL> <message>", e.g.
//   2026-12-01T18:47:25.123Z INFO serving gRPC on port 7443
// Thread-safe (one write(2) per line). Control and format characters in a message are
// escaped (EscapeForTerminal, text.h): messages quote what others wrote.
#pragma once

#include "absl/strings/string_view.h"

namespace fleetmark {

enum class LogLevel { kInfo, kWarning, kError };

void Log(LogLevel level, absl::string_view message);

}  // namespace fleetmark
