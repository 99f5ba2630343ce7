#include "tests/web/pg_database.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fleetmark::testing {

absl::StatusOr<std::string> RunCommand(const std::vector<std::string>& argv) {
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof(buffer))) > 0;) output.append(buffer, n);
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " exited with status ", status));
  }
  return output;
}

bool RequirePg() {
  const char* value = std::getenv("FLEETMARK_TEST_REQUIRE_PG");
  return value != nullptr && std::string(value) == "1";
}

absl::StatusOr<std::unique_ptr<FreshDatabase>> FreshDatabase::Create(const std::string& prefix) {
  const char* admin = std::getenv("FLEETMARK_TEST_PG_URI");
  if (admin == nullptr || *admin == '\0') {
    return absl::FailedPreconditionError("FLEETMARK_TEST_PG_URI is not set");
  }
  const std::string admin_uri = admin;
  const std::string name =
      absl::StrCat("fleetmark_", prefix, "_", getpid(), "_", absl::ToUnixMicros(absl::Now()) % 1000000000);
  auto created =
      RunCommand({"psql", admin_uri, "-v", "ON_ERROR_STOP=1", "-qtA", "-c", absl::StrCat("CREATE DATABASE ", name)});
  if (!created.ok()) return created.status();
  // Same server and credentials, other database: replace the URI's path.
  const size_t scheme = admin_uri.find("://");
  const size_t slash = admin_uri.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const size_t query = admin_uri.find('?', slash == std::string::npos ? 0 : slash);
  std::string uri = slash == std::string::npos ? absl::StrCat(admin_uri, "/", name)
                                               : absl::StrCat(admin_uri.substr(0, slash + 1), name);
  if (query != std::string::npos) absl::StrAppend(&uri, admin_uri.substr(query));
  return std::unique_ptr<FreshDatabase>(new FreshDatabase(admin_uri, name, uri));
}

FreshDatabase::~FreshDatabase() {
  if (keep_) return;
  RunCommand({"psql", admin_uri_, "-qtA", "-c", absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)")})
      .IgnoreError();
}

}  // namespace fleetmark::testing
