#include "engine/common/text.h"

#include <locale.h>
#include <wchar.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_format.h"

namespace fleetmark {
namespace {

// Length (1..4) of the well-formed UTF-8 sequence at text[i], its code point in *cp;
// 0 if the bytes there are not one.
size_t DecodeUtf8(std::string_view text, size_t i, char32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t length = 0;
  char32_t value = 0, min = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2, value = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3, value = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4, value = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    value = (value << 6) | (byte(i + k) & 0x3f);
  }
  if (value < min || value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff)) return 0;
  *cp = value;
  return length;
}

bool IsControl(char32_t cp, bool allow_newlines) {
  if (allow_newlines && (cp == '\n' || cp == '\t')) return false;
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f);
}

// Unicode general category Cf (format characters), Unicode 15: invisible, and some
// (bidirectional overrides and isolates, U+202A..U+202E, U+2066..U+2069) reorder the
// text printed after them.
bool IsFormatCharacter(char32_t cp) {
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x00ad, 0x00ad},   {0x0600, 0x0605},   {0x061c, 0x061c},   {0x06dd, 0x06dd},   {0x070f, 0x070f},
      {0x0890, 0x0891},   {0x08e2, 0x08e2},   {0x180e, 0x180e},   {0x200b, 0x200f},   {0x202a, 0x202e},
      {0x2060, 0x2064},   {0x2066, 0x206f},   {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd},
      {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
      {0xe0020, 0xe007f},
  };
  for (const auto& [first, last] : kRanges) {
    if (cp >= first && cp <= last) return true;
  }
  return false;
}

}  // namespace

bool IsBidiControl(char32_t cp) {
  return cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

bool IsValidUtf8(std::string_view text) {
  char32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool IsPrintableText(std::string_view text, bool allow_newlines) {
  char32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0) {  // not UTF-8: judged by IsValidUtf8
      ++i;
      continue;
    }
    if (IsControl(cp, allow_newlines) || IsBidiControl(cp)) return false;
    i += n;
  }
  return true;
}

std::optional<std::string> TextProblem(std::string_view text, bool allow_newlines) {
  char32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0) return absl::StrCat("invalid UTF-8 at byte ", i);
    if (IsControl(cp, allow_newlines)) {
      return absl::StrFormat("control character U+%04X at byte %d", static_cast<uint32_t>(cp), i);
    }
    if (IsBidiControl(cp)) {
      return absl::StrFormat("bidirectional control U+%04X at byte %d", static_cast<uint32_t>(cp), i);
    }
    i += n;
  }
  return std::nullopt;
}

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
    } else if (!absl::ascii_isxdigit(static_cast<unsigned char>(text[i]))) {
      return false;
    }
  }
  return true;
}

size_t CharacterCount(std::string_view text) {
  size_t count = 0;
  char32_t cp = 0;
  for (size_t i = 0; i < text.size(); ++count) {
    const size_t n = DecodeUtf8(text, i, &cp);
    i += n == 0 ? 1 : n;
  }
  return count;
}

std::string StorableText(std::string_view text, size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  char32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = DecodeUtf8(text, i, &cp);
    const bool keep = n > 0 && cp != 0;
    const std::string_view piece = keep ? text.substr(i, n) : kReplacement;
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece);
    i += keep ? n : 1;
  }
  return out;
}

std::string EscapeForTerminal(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(text.size());
  char32_t cp = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t n = DecodeUtf8(text, i, &cp);
    if (max_bytes > 0 && i + (n == 0 ? 1 : n) > max_bytes) break;
    if (n == 0 || IsControl(cp, false)) {
      for (size_t k = 0; k < (n == 0 ? 1 : n); ++k) {
        absl::StrAppend(&out, "\\x", absl::Hex(static_cast<unsigned char>(text[i + k]), absl::kZeroPad2));
      }
      i += n == 0 ? 1 : n;
      continue;
    }
    if (IsFormatCharacter(cp)) {
      absl::StrAppend(&out, "\\u", absl::Hex(static_cast<uint32_t>(cp), absl::kZeroPad4));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  if (i < text.size()) out += "...";
  return out;
}

std::string EchoValue(std::string_view value) { return EscapeForTerminal(value, kMaxEchoBytes); }

std::string CutEchoes(std::string_view message, std::string_view value) {
  if (value.size() <= kMaxEchoBytes) return std::string(message);
  const std::string echo = EchoValue(value);
  return absl::StrReplaceAll(absl::string_view(message.data(), message.size()),
                             {{absl::string_view(value.data(), value.size()), absl::string_view(echo)}});
}

std::string ParserProblemText(std::string_view message, size_t max_bytes) {
  std::string line(message.substr(0, message.find_first_of("\r\n")));
  for (std::string_view code : {"INVALID_ARGUMENT:", "INVALID_ARGUMENT: "}) {
    if (line.rfind(code, 0) == 0) line.erase(0, code.size());
  }
  line = absl::StrReplaceAll(line, {{"fleetmark.v1.", ""}});
  while (!line.empty() && (line.back() == '.' || line.back() == ' ')) line.pop_back();
  return EscapeForTerminal(line, max_bytes);
}

std::string CutLongEchoes(std::string_view message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const size_t open = message.find('"', i);
    if (open == std::string_view::npos) {
      out.append(message.substr(i));
      break;
    }
    out.append(message.substr(i, open + 1 - i));
    const size_t close = message.find('"', open + 1);
    const size_t end = close == std::string_view::npos ? message.size() : close;
    const std::string_view value = message.substr(open + 1, end - open - 1);
    out.append(value.size() > kMaxEchoBytes ? EchoValue(value) : std::string(value));
    if (close == std::string_view::npos) break;
    out.push_back('"');
    i = close + 1;
  }
  if (out.size() <= kMaxErrorMessageBytes) return out;
  return EscapeForTerminal(out, kMaxErrorMessageBytes);
}

namespace {

// The C.UTF-8 locale for wcwidth; nullptr where it cannot be loaded. Created once,
// never freed (it is shared by every thread).
locale_t Utf8Locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return locale;
}

// Calls `visit(offset, bytes, columns)` for each character of `text` in order: its byte
// offset, its UTF-8 length (1 for a byte that is not UTF-8) and its width in columns.
template <typename Visit>
void ForEachCharacterWidth(std::string_view text, Visit visit) {
  const locale_t utf8 = Utf8Locale();
  const locale_t previous = utf8 != nullptr ? uselocale(utf8) : nullptr;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    size_t length = DecodeUtf8(text, i, &cp);
    size_t columns = 1;
    if (length == 0) {
      length = 1;
    } else if (utf8 != nullptr && cp >= 0x20) {
      const int w = wcwidth(static_cast<wchar_t>(cp));
      columns = w < 0 ? 1 : static_cast<size_t>(w);
    }
    visit(i, length, columns);
    i += length;
  }
  if (previous != nullptr) uselocale(previous);
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  ForEachCharacterWidth(text, [&](size_t, size_t, size_t columns) { width += columns; });
  return width;
}

std::string_view PrefixOfWidth(std::string_view text, size_t columns) {
  size_t width = 0;
  size_t end = 0;
  bool full = false;
  ForEachCharacterWidth(text, [&](size_t at, size_t length, size_t w) {
    if (full) return;
    if (width + w > columns) {
      full = true;
      return;
    }
    width += w;
    end = at + length;
  });
  return text.substr(0, end);
}

namespace {
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && IsDigit(a[ei])) ++ei;
      while (ej < b.size() && IsDigit(b[ej])) ++ej;
      size_t si = i, sj = j;  // past the leading zeros
      while (si + 1 < ei && a[si] == '0') ++si;
      while (sj + 1 < ej && b[sj] == '0') ++sj;
      const std::string_view x = a.substr(si, ei - si), y = b.substr(sj, ej - sj);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      if (ei - i != ej - j) return ei - i < ej - j;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

}  // namespace fleetmark
