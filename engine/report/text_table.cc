#include "engine/report/text_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_split.h"
#include "engine/common/text.h"

namespace fleetmark::report {

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {
  for (Column& column : columns_) column.header = EscapeForTerminal(column.header);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (std::string& cell : cells) cell = EscapeForTerminal(cell);
  rows_.push_back(std::move(cells));
}

std::vector<size_t> TextTable::Widths() const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = DisplayWidth(columns_[c].header);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  return widths;
}

size_t TextTable::LastColumnStart() const {
  const std::vector<size_t> widths = Widths();
  size_t start = 0;
  for (size_t c = 0; c + 1 < widths.size(); ++c) start += widths[c] + 2;
  return start;
}

std::string TextTable::Render(size_t max_width) const {
  const std::vector<size_t> widths = Widths();
  const size_t last_start = LastColumnStart();
  const size_t wrap_width =
      max_width == 0 ? 0 : std::max(kMinWrapWidth, max_width > last_start ? max_width - last_start : 0);
  std::string out;
  auto append_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    std::vector<std::string> continued;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += "  ";
      const bool last = c + 1 == cells.size();
      if (last && wrap_width > 0 && DisplayWidth(cells[c]) > wrap_width) {
        continued = WrapText(cells[c], wrap_width);
        line += continued.front();
        continued.erase(continued.begin());
        continue;
      }
      const size_t pad = widths[c] - DisplayWidth(cells[c]);
      if (columns_[c].align == Align::kRight) line.append(pad, ' ');
      line += cells[c];
      if (columns_[c].align == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
    for (const std::string& more : continued) {
      out.append(last_start, ' ');
      out += more;
      out += '\n';
    }
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

std::vector<std::string> WrapText(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  if (width == 0) {
    if (!text.empty()) lines.push_back(text);
    return lines;
  }
  std::string line;
  size_t line_width = 0;
  auto flush = [&] {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
    line.clear();
    line_width = 0;
  };
  for (absl::string_view piece : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    std::string_view word(piece.data(), piece.size());  // absl::string_view is its own type here
    size_t word_width = DisplayWidth(word);
    if (line_width > 0 && line_width + 1 + word_width > width) flush();
    while (word_width > width) {  // longer than a line: cut it
      std::string_view head = PrefixOfWidth(word, width);
      if (head.empty()) head = word.substr(0, 1);  // a character wider than the line
      lines.emplace_back(head);
      word.remove_prefix(head.size());
      word_width = DisplayWidth(word);
    }
    if (word.empty()) continue;
    if (line_width > 0) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += word_width;
  }
  flush();
  return lines;
}

}  // namespace fleetmark::report
