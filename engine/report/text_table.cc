#include "engine/report/text_table.h"

#include <algorithm>
#include <utility>

#include "engine/common/text.h"
#include "engine/report/units.h"

namespace fleetmark::report {

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (Column& column : columns_) column.header = EscapeForTerminal(column.header);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& cell : cells) cell = EscapeForTerminal(cell);
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  std::string out;
  auto append_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += "  ";
      const size_t pad = widths[c] - DisplayWidth(cells[c]);
      const bool last = c + 1 == cells.size();
      if (columns_[c].align == Align::kRight) line.append(pad, ' ');
      line += cells[c];
      if (columns_[c].align == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  };
  std::vector<std::string> headers;
  for (const Column& col : columns_) headers.push_back(col.header);
  append_line(headers);
  // The rule spans the columns, but only the header of the last (unpadded) column,
  // so one long message does not stretch it.
  size_t total = 0;
  for (size_t c = 0; c < widths.size(); ++c) {
    const bool last = c + 1 == widths.size();
    total += (last ? DisplayWidth(columns_[c].header) : widths[c]) + (c > 0 ? 2 : 0);
  }
  out.append(total, '-');
  out += '\n';
  for (const auto& row : rows_) append_line(row);
  return out;
}

}  // namespace fleetmark::report
