// Where one HTTP/1.1 request ends in the bytes a connection has sent, and whether its
// framing is one the web server takes (RFC 9112): the web server's front (request_gate.h)
// reads a whole request with this before any handler sees it, so a request is never
// read line by line by a worker, and a body is never read beyond the cap.
//
//   RequestFraming f = FrameRequest(received, RequestLimits{});
//   if (f.state == RequestFraming::kRefused) answer(f.status, f.error);       // at once
//   if (f.state == RequestFraming::kComplete) handle(received.substr(0, f.size()));
//
// Rules (each refusal names the rule in `error`):
//   - the request line, CRLF included, at most `max_request_line` bytes, else 414;
//   - request line and header fields at most `max_head` bytes up to the blank line, else 431;
//   - lines end in CRLF: a bare CR or LF, or a NUL byte, in the head is 400;
//   - a header field name holds no whitespace (RFC 9112 5.1): 400;
//   - Content-Length is one decimal number (1..18 digits; repeated fields must agree),
//     else 400 (RFC 9112 6.3); over `max_body` bytes it is 413 for every method
//     (GET and HEAD included), decided from the header alone, before any body byte;
//   - Transfer-Encoding is 411 (send Content-Length: no endpoint takes a body);
//   - no Content-Length: no body (RFC 9112 6.3, a request).
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fleetmark::http {

struct RequestLimits {
  size_t max_request_line = 8192;  // bytes, CRLF included (cpp-httplib's URI limit)
  size_t max_head = 32 * 1024;     // bytes, request line to blank line inclusive
  size_t max_body = 64 * 1024;     // bytes of Content-Length
};

struct RequestFraming {
  enum State { kIncomplete, kComplete, kRefused };
  State state = kIncomplete;
  size_t head_bytes = 0;  // kComplete: request line through the blank line
  size_t body_bytes = 0;  // kComplete: Content-Length (0 without one)
  int status = 0;         // kRefused: 400, 411, 413, 414 or 431
  std::string error;      // kRefused: why, e.g. "request body too large (at most 65536 bytes)"
  // Bytes of the whole request (kComplete).
  size_t size() const { return head_bytes + body_bytes; }
};

// Frames the request at the start of `received` (the bytes so far; more may follow).
// kIncomplete: wait for more bytes (the whole request is not there yet, the body
// included). kRefused can be decided on a partial head (a request line already too long).
RequestFraming FrameRequest(std::string_view received, const RequestLimits& limits);

// The error text of a refusal for a request line over `max_request_line` bytes and a
// body over `max_body` bytes (one wording, also for cpp-httplib's own 414/413).
std::string RequestLineTooLong(size_t max_request_line);
std::string BodyTooLarge(size_t max_body);

}  // namespace fleetmark::http
