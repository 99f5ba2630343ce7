// Flags of `fleetmark topology` (it also reads the shared --format flag of run_flags.cc).
#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, fsroot, "",
          "topology: read a recorded Linux tree (a directory with sys/ and proc/, e.g. an "
          "unpacked hwloc test archive) instead of the live machine");
