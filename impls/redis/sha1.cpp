#include "redis/sha1.h"

#include <array>
#include <cstdio>

#include <openssl/evp.h>

// OpenSSL's libcrypto computes it (EVP_Digest; the low-level SHA1() is
// deprecated in OpenSSL 3). Speed does not matter: a few scripts, hashed once.
namespace locklab::redis {

std::string sha1_hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha1(), nullptr) != 1) return {};
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

}  // namespace locklab::redis
