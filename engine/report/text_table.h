// A plain-text table with aligned columns, for the report's human tables.
//
//   TextTable t({{"strategy", Align::kLeft}, {"median", Align::kRight}});
//   t.AddRow({"fixed_pool", "1.23 ms"});
//   std::string text = t.Render();
#pragma once

#include <string>
#include <vector>

namespace fleetmark::report {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  Align align = Align::kLeft;
};

class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns);

  // Adds a row; missing cells are empty, extra cells are dropped. The last column is
  // never padded (it may hold long messages). Cells and headers are kept as
  // EscapeForTerminal (engine/common/text.h) writes them: a table never carries a raw
  // control character (cells often hold agent-provided text).
  void AddRow(std::vector<std::string> cells);

  // Header, a rule of '-', then the rows; columns separated by two spaces; each line
  // ends with '\n' and has no trailing spaces. Widths count UTF-8 code points.
  std::string Render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace fleetmark::report
