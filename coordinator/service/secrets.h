// Secrets of the coordinator: enrollment tokens, agent credentials and the admin token.
// Only SHA-256 digests of tokens and credentials are stored (OpenSSL libcrypto).
//
//   std::string token = RandomToken();                 // 64 hex chars, 256 bits
//   store.CreateEnrollmentToken(id, Sha256Hex(token), "lab boards");
//
// Thread-safety: all functions are safe from any thread.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace fleetmark::service {

// Lower-case hex SHA-256 of `data` (FIPS 180-4).
std::string Sha256Hex(absl::string_view data);

// 32 random bytes from OpenSSL's CSPRNG, hex-encoded (64 characters).
std::string RandomToken();

// Equality in time independent of where the inputs differ (for token checks).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace fleetmark::service
