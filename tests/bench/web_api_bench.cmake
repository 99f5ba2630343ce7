# Web API latency with 1 000 000 case results: run and compare calls, p95 target
# 100 ms (tests/bench/web_api_bench.cc; shares tests/web/pg_database.cc).
pkg_check_modules(WEB_BENCH_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
fleetmark_add_bench(NAME web_api_bench
  SOURCES web_api_bench.cc ${PROJECT_SOURCE_DIR}/tests/web/pg_database.cc
  LIBS fleetmark_http fleetmark_store PkgConfig::WEB_BENCH_HTTPLIB absl::flags absl::flags_parse)
