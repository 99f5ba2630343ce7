// The UTF-8 byte order mark (EF BB BF), which some editors write at the start of a text
// file. Plans and results files are read without it: protobuf's parsers refuse it ("non
// ascii codepoint 239", "Expected a value"). Header-only; pure, thread-safe.
#pragma once

#include <string_view>

namespace fleetmark {

// `text` without a leading UTF-8 byte order mark (a view into `text`).
constexpr std::string_view WithoutUtf8Bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  return text.substr(0, kBom.size()) == kBom ? text.substr(kBom.size()) : text;
}

}  // namespace fleetmark
