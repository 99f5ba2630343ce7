// web_test_server: only the coordinator's HTTP edge (fleetmark_http) over a database,
// for developing and testing the web view without agents or gRPC. The browser test
// uses the real fleetmark-coordinator when it is built, and this otherwise.
//
//   web_test_server --database_uri=URI [--http_address=127.0.0.1:0] [--http_token=T]
// Prints "web view at http://HOST:PORT/" on stderr once serving; stops on SIGINT/SIGTERM.
#include <signal.h>

#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "coordinator/http/http_server.h"

ABSL_FLAG(std::string, database_uri, "", "PostgreSQL URI");
ABSL_FLAG(std::string, http_address, "127.0.0.1:0", "listen address host:port");
ABSL_FLAG(std::string, http_token, "", "bearer token for the API (empty = none)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  fleetmark::http::HttpServerOptions options;
  options.address = absl::GetFlag(FLAGS_http_address);
  options.pg_uri = absl::GetFlag(FLAGS_database_uri);
  options.bearer_token = absl::GetFlag(FLAGS_http_token);
  auto server = fleetmark::http::StartHttpServer(options);
  if (!server.ok()) {
    std::cerr << "web_test_server: " << server.status() << std::endl;
    return 1;
  }
  std::cerr << "web_test_server: web view at " << (*server)->url() << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  (*server)->Stop();
  return 0;
}
