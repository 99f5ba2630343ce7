#include "coordinator/cli/table_fit.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/numbers.h"

namespace fleetmark::cli {

size_t OutputWidth(bool wide) {
  if (wide) return 0;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    int value = 0;
    if (absl::SimpleAtoi(columns, &value) && value >= 20 && value <= 10000) return static_cast<size_t>(value);
  }
  struct winsize size = {};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) {
    return size.ws_col;
  }
  return 0;
}

report::TableOptions FittedTableOptions(bool wide, bool to_file) {
  return report::TableOptions{.max_width = to_file ? 0 : OutputWidth(wide), .collapse_unsupported = !wide};
}

}  // namespace fleetmark::cli
