// RunGuarded: runs a task so that an exception escaping it is logged to stderr instead
// of killing the executor thread (or calling std::terminate). Every executor runs its
// tasks through it, so one throwing task cannot shrink a pool or stall a Limiter.
#pragma once

#include <cstdio>
#include <exception>
#include <string_view>

namespace fleetmark::engine {

// Calls `fn()`; if it throws, prints "fleetmark: exception escaped <where>: <what>" to
// stderr and returns normally. Thread-safe if `fn` is.
template <typename Fn>
void RunGuarded(Fn&& fn, std::string_view where) noexcept {
  try {
    fn();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetmark: exception escaped %.*s: %s\n", static_cast<int>(where.size()), where.data(),
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "fleetmark: unknown exception escaped %.*s\n", static_cast<int>(where.size()), where.data());
  }
}

}  // namespace fleetmark::engine
