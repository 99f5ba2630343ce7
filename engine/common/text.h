// Text taken from outside (plans, agent hellos) and text printed to a terminal: the
// one definition of well-formed UTF-8, of a control character, and of how the CLI
// escapes what it did not write itself.
//
//   if (!IsPrintableText(name, /*allow_newlines=*/false)) ...    // refuse it
//   std::cout << EscapeForTerminal(agent.host().cpu_model());    // print it safely
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fleetmark {

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// Whether `cp` is one of the Unicode bidirectional controls (U+200E, U+200F,
// U+202A..U+202E, U+2066..U+2069): invisible, they reorder the text shown after them
// (e.g. U+202E makes "ab\u202ecd" display as "abdc").
bool IsBidiControl(char32_t cp);

// Whether `text` holds no control character: no C0 control byte (0x00..0x1F), DEL
// (0x7F) or C1 control (U+0080..U+009F, UTF-8 C2 80..C2 9F), any of which drives a
// terminal when echoed, and no bidirectional control (IsBidiControl), which makes the
// text display as other text. `allow_newlines` admits \n and \t. Bytes that are not UTF-8
// are not judged here (IsValidUtf8).
bool IsPrintableText(std::string_view text, bool allow_newlines);

// The first reason `text` is not valid printable UTF-8, e.g. "invalid UTF-8 at byte
// 5", "control character U+001B at byte 0" or "bidirectional control U+202E at byte
// 2"; nullopt when it is. `allow_newlines` as
// for IsPrintableText.
std::optional<std::string> TextProblem(std::string_view text, bool allow_newlines);

// Whether `text` is a UUID in its text form: 8-4-4-4-12 hex digits (either case), any
// version (ids of agents, runs, jobs, results).
bool IsUuid(std::string_view text);

// `text` as it may be written to a terminal: control characters (as IsPrintableText
// defines them, newline and tab included) and bytes that are not UTF-8 become \xNN
// (a C1 control: its two UTF-8 bytes), Unicode format characters (category Cf:
// invisible, and the bidirectional overrides U+202A..U+202E and isolates
// U+2066..U+2069 reorder what follows) become \uXXXX (lower-case hex, at least four
// digits: U+202E is "\u202e"), every other character is kept, so `^[]0;pwned^G` prints
// as the text "\x1b]0;pwned\x07". `max_bytes` (0 = no limit) cuts the input first, at a
// character boundary, and appends "...".
std::string EscapeForTerminal(std::string_view text, size_t max_bytes = 0);

// The most bytes of a value someone sent (a flag value, an argument, a file path, a
// request field) an error message echoes; longer values are cut there with "..."
// appended. The one echo rule of the CLI and of the coordinator's gRPC errors.
inline constexpr size_t kMaxEchoBytes = 200;

// `value`, given by the user, as an error message echoes it: EscapeForTerminal cut at
// kMaxEchoBytes. "--profile: got \"" + EchoValue(big) + "\"" stays short and inert.
std::string EchoValue(std::string_view value);

// `message` with each occurrence of `value` (a user-given value longer than
// kMaxEchoBytes, e.g. a 100 KB path in a library's "cannot read <path>: ...") replaced
// by EchoValue(value); `message` unchanged when `value` is short.
std::string CutEchoes(std::string_view message, std::string_view value);

// The most bytes of an error message sent back over gRPC (its grpc-message trailer:
// clients refuse metadata past 8 KiB by default).
inline constexpr size_t kMaxErrorMessageBytes = 4096;

// An error message as it is sent back to whoever sent the value it echoes (every gRPC
// error of the coordinator): each double-quoted span longer than kMaxEchoBytes becomes
// EchoValue(span) (a quote left open runs to the end), then the whole is cut at
// kMaxErrorMessageBytes (EscapeForTerminal's cut). A 6 MB plan field echoed as
// `got "<6 MB>"` is sent as `got "<200 bytes>..."`; short messages are unchanged.
std::string CutLongEchoes(std::string_view message);

// A parser's error message (protobuf's text-format and JSON parsers) as a person reads
// it: its first line only (the lines after it quote the input around the error, whose
// newlines showed as "\x0a" inside the one error line), without a status-code prefix
// ("INVALID_ARGUMENT:"), without protobuf's package of fleetmark's types
// ("fleetmark.v1."), without a trailing period, escaped (EscapeForTerminal) and cut at
// `max_bytes`. "Unexpected token.\ncase_id,median\n^" -> "Unexpected token".
std::string ParserProblemText(std::string_view message, size_t max_bytes = 300);

// `text` as a PostgreSQL text value can hold it (agent-reported messages stored by the
// coordinator): well-formed UTF-8 with no NUL byte, at most `max_bytes` bytes, cut at a
// character boundary (never inside a multi-byte character, which PostgreSQL refuses
// as "invalid byte sequence"). NUL bytes and bytes that are not UTF-8 become U+FFFD.
std::string StorableText(std::string_view text, size_t max_bytes);

// Characters (code points) in `text`, as messages that say "characters" count them: a
// byte that is not UTF-8 counts 1. "sch\xf0\x9f\x98\x80" (sch + an emoji) is 4.
size_t CharacterCount(std::string_view text);

// Columns `text` (UTF-8) takes on a terminal: each character's glibc wcwidth under the
// C.UTF-8 locale (newlocale/uselocale, this thread only), so CJK and emoji count 2,
// combining marks and zero-width characters 0, other printable characters 1; a byte
// that is not UTF-8 and a control character count 1 (tables hold EscapeForTerminal
// text, which has neither). Where C.UTF-8 cannot be loaded (a static binary without
// locale data), every code point counts 1. Thread-safe.
size_t DisplayWidth(std::string_view text);

// The longest prefix of `text` (UTF-8) at most `columns` wide (DisplayWidth), cut at a
// character boundary and never between a character and its combining marks.
std::string_view PrefixOfWidth(std::string_view text, size_t columns);

// Natural order of names with numbers in them ("cpu_ns=20000" before "cpu_ns=100000",
// "x2" before "x10"): runs of ASCII digits compare by numeric value (leading zeros
// ignored; equal values then by the run's length), everything else byte by byte;
// equal under that, plain byte order decides. A strict weak order. Pure.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace fleetmark
