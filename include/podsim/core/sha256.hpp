// SHA-256 of input files, so that result.json names exactly which topology, workload and profiles a run
// read (provenance). OpenSSL's libcrypto does the hashing; we only read the file.
#pragma once

#include <string>

namespace podsim {

// Lower-case hex digest of `data`.
std::string sha256_hex(const std::string& data);

// Lower-case hex digest of the file's bytes; throws InputError naming the file when it cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace podsim
