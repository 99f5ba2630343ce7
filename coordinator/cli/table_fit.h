// How the CLI fits result tables to the terminal: `fleetmark run`, `runs show` and
// `submit --wait` share one rule (the --wide flag, run_flags.h).
#pragma once

#include <cstddef>

#include "engine/report/table.h"

namespace fleetmark::cli {

// The terminal columns the result tables fit (report::TableOptions::max_width): 0 (no
// limit) when `wide`; else $COLUMNS when it holds 20..10000; else the width of the
// terminal on stdout (TIOCGWINSZ); else 0: output that is not a terminal (a pipe, a
// file) keeps the full, stable layout unless $COLUMNS asks otherwise.
size_t OutputWidth(bool wide);

// Table options of `run`, `runs show` and `submit --wait`: fitted to OutputWidth(wide)
// (0 when `to_file`: a file written by --out keeps the full layout), unsupported cases
// collapsed into one line per table unless `wide`.
report::TableOptions FittedTableOptions(bool wide, bool to_file = false);

}  // namespace fleetmark::cli
