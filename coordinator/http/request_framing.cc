#include "coordinator/http/request_framing.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/common/text.h"

namespace fleetmark::http {
namespace {

RequestFraming Refuse(int status, std::string error) {
  RequestFraming f;
  f.state = RequestFraming::kRefused;
  f.status = status;
  f.error = std::move(error);
  return f;
}

absl::string_view View(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::string RequestLineTooLong(size_t max_request_line) {
  return absl::StrCat("request line too long (at most ", max_request_line, " bytes)");
}

std::string BodyTooLarge(size_t max_body) {
  return absl::StrCat("request body too large (at most ", max_body, " bytes)");
}

RequestFraming FrameRequest(std::string_view received, const RequestLimits& limits) {
  const absl::string_view bytes = View(received);
  const size_t line_end = bytes.substr(0, limits.max_request_line + 1).find("\r\n");
  if (line_end == absl::string_view::npos) {
    // Not a whole line yet: too long already once it cannot end within the limit.
    if (bytes.size() >= limits.max_request_line) return Refuse(414, RequestLineTooLong(limits.max_request_line));
  } else if (line_end + 2 > limits.max_request_line) {
    return Refuse(414, RequestLineTooLong(limits.max_request_line));
  }
  const size_t blank = bytes.substr(0, limits.max_head + 1).find("\r\n\r\n");
  if (blank == absl::string_view::npos || blank + 4 > limits.max_head) {
    if (bytes.size() >= limits.max_head) {
      return Refuse(431, absl::StrCat("request header fields too large (at most ", limits.max_head, " bytes)"));
    }
    if (blank == absl::string_view::npos) return {};
  }
  const absl::string_view head = bytes.substr(0, blank + 2);  // each line with its CRLF
  for (size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    const bool bare_cr = c == '\r' && (i + 1 == head.size() || head[i + 1] != '\n');
    const bool bare_lf = c == '\n' && (i == 0 || head[i - 1] != '\r');
    if (c == '\0' || bare_cr || bare_lf) {
      return Refuse(400, absl::StrCat("malformed request: ",
                                      c == '\0' ? "a NUL byte"
                                      : bare_cr ? "a bare CR"
                                                : "a bare LF",
                                      " at byte ", i, " of the head (lines end in CRLF, RFC 9112 2.2)"));
    }
  }
  RequestFraming f;
  f.head_bytes = blank + 4;
  bool has_length = false;
  for (size_t begin = line_end + 2; begin < head.size();) {
    const size_t end = head.find("\r\n", begin);
    const absl::string_view line = head.substr(begin, end - begin);
    begin = end + 2;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;  // not a field: cpp-httplib's parser judges it
    const absl::string_view name = line.substr(0, colon);
    if (std::any_of(name.begin(), name.end(), [](char ch) { return ch == ' ' || ch == '\t'; })) {
      return Refuse(400,
                    absl::StrCat("header field \"", EscapeForTerminal(std::string_view(name.data(), name.size()), 80),
                                 "\": no whitespace in a field name (RFC 9112 5.1)"));
    }
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      return Refuse(411, "Transfer-Encoding is not taken: send Content-Length (the web view takes no body)");
    }
    if (!absl::EqualsIgnoreCase(name, "Content-Length")) continue;
    uint64_t length = 0;
    if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(value, &length) || (has_length && length != f.body_bytes)) {
      return Refuse(
          400, absl::StrCat("Content-Length: one decimal number of bytes, got \"",
                            EscapeForTerminal(std::string_view(value.data(), value.size()), 80), "\" (RFC 9112 6.3)"));
    }
    has_length = true;
    f.body_bytes = length;
  }
  if (f.body_bytes > limits.max_body) return Refuse(413, BodyTooLarge(limits.max_body));
  f.state = bytes.size() >= f.size() ? RequestFraming::kComplete : RequestFraming::kIncomplete;
  return f;
}

}  // namespace fleetmark::http
