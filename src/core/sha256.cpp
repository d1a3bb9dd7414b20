#include "podsim/core/sha256.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "podsim/core/error.hpp"

namespace podsim {

std::string sha256_hex(const std::string& data) {
  // EVP_Digest is OpenSSL's one-shot interface (the SHA256() shortcut is deprecated in OpenSSL 3).
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL EVP_Digest(SHA-256) failed");
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot be read to record its SHA-256", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return sha256_hex(bytes.str());
}

}  // namespace podsim
