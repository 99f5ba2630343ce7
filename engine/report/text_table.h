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
  // ends with '\n' and has no trailing spaces. Widths are display widths (DisplayWidth,
  // engine/common/text.h: CJK and emoji two columns, combining marks none).
  // `max_width` > 0: a last-column cell that would end past that column wraps at
  // spaces (WrapText) onto continuation lines starting where the column starts, at
  // least kMinWrapWidth columns wide however wide the other columns are.
  std::string Render(size_t max_width = 0) const;

  // The display column where the last column starts: the other columns' widths and
  // their separators.
  size_t LastColumnStart() const;

  static constexpr size_t kMinWrapWidth = 12;

 private:
  std::vector<size_t> Widths() const;

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// `text` in lines at most `width` display columns wide (width 0 = one line), broken at
// spaces; a word wider than `width` is cut at a character boundary. Empty text: no line.
std::vector<std::string> WrapText(const std::string& text, size_t width);

}  // namespace fleetmark::report
