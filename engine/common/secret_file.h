// The one reader of secret (token) files: the coordinator's --admin_token_file,
// --enrollment_token_file and --http_token_file, the CLI's admin token file and the
// agent's --token_file; and the one check of a token sent as an HTTP/2 header value
// (the CLI's admin token, the web view's bearer token): visible ASCII.
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::string token, ReadSecretFile("--token_file", path));
//
// Thread-safe (reads the file once, no shared state).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark {

// A token is at most this many bytes (gRPC's metadata limit is 8 KiB).
inline constexpr size_t kMaxSecretBytes = 4096;

// OK if `secret` is a token: 1..kMaxSecretBytes bytes of visible ASCII (0x21..0x7e,
// no spaces). Else InvalidArgument "<named> is empty; it must hold <holds>", "<named>
// holds N bytes; ..." or "<named> holds byte 0xNN at offset I; a token is visible
// ASCII (0x21..0x7e, no spaces)". The secret itself is never quoted.
absl::Status CheckSecretText(std::string_view named, std::string_view secret, std::string_view holds = "the token");

// The text of the file at `path` with surrounding ASCII whitespace removed. Every
// error message starts `<what>: "<path>"` (`what` names where the path came from: a
// flag, an environment variable, a default file) and says what is wrong:
//   NotFound / PermissionDenied (else InvalidArgument): "cannot read: <strerror>";
//   InvalidArgument: a directory or another non-regular file; "is empty; it must hold
//   <holds>"; "holds N bytes; ..." past kMaxSecretBytes. The bytes are not judged here
//   (CheckSecretText for a header value; the agent's hello applies its text rules).
absl::StatusOr<std::string> ReadSecretFile(std::string_view what, const std::string& path,
                                           std::string_view holds = "the token");

}  // namespace fleetmark
