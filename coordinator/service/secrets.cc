#include "coordinator/service/secrets.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdlib>
#include <iostream>

#include "absl/strings/escaping.h"

namespace fleetmark::service {

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string RandomToken() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
    // Cannot happen on Linux with a working getrandom(); never hand out a weak token.
    std::cerr << "fleetmark: OpenSSL RAND_bytes failed\n";
    std::abort();
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace fleetmark::service
