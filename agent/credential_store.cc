#include "agent/credential_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/file_util.h"

namespace fleetmark::agent {
namespace {

constexpr absl::string_view kFileName = "credential";
constexpr size_t kMaxSecretBytes = 4096;

std::string PathIn(const std::string& dir) { return absl::StrCat(dir, "/", kFileName); }

}  // namespace

absl::StatusOr<std::optional<StoredCredential>> LoadCredential(const std::string& state_dir) {
  const std::string path = PathIn(state_dir);
  absl::StatusOr<std::string> text = ReadWholeFile(path, kMaxSecretBytes);
  if (absl::IsNotFound(text.status())) return std::optional<StoredCredential>();
  if (!text.ok()) return text.status();
  // Two lines: "agent_id <id>" and "credential <secret>".
  StoredCredential stored;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "agent_id ")) {
      stored.agent_id = std::string(line);
    } else if (absl::ConsumePrefix(&line, "credential ")) {
      stored.credential = std::string(line);
    } else {
      return absl::InternalError(absl::StrCat(path, ": unexpected line \"", line, "\""));
    }
  }
  if (stored.agent_id.empty() || stored.credential.empty()) {
    return absl::InternalError(absl::StrCat(path, ": needs both an agent_id and a credential line"));
  }
  return std::optional<StoredCredential>(std::move(stored));
}

absl::Status SaveCredential(const std::string& state_dir, const StoredCredential& stored) {
  for (const auto& [field, value] : {std::pair<absl::string_view, const std::string&>("agent_id", stored.agent_id),
                                     {"credential", stored.credential}}) {
    if (value.empty() || value.find_first_of("\r\n ") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("credential.", field, ": non-empty, without spaces or newlines"));
    }
  }
  return ReplaceFileAtomically(
      state_dir, kFileName, absl::StrCat("agent_id ", stored.agent_id, "\ncredential ", stored.credential, "\n"), 0600);
}

absl::Status ForgetCredential(const std::string& state_dir) {
  const std::string path = PathIn(state_dir);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "unlink", path);
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::agent
