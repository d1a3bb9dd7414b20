// podsim validate on a table in NVIDIA's schema: prints the rows as they finish and writes the files.
#pragma once

#include <string>

#include "podsim/driver/nvidia_validation.hpp"

namespace podsim::cli {

struct NvidiaValidateOptions {
  driver::NvidiaValidationRequest request;
  std::string out;   // directory for validation.csv; none when empty
  std::string json;  // --json file; none when empty
};

driver::NvidiaValidation run_nvidia_validation(const NvidiaValidateOptions& opt);

}  // namespace podsim::cli
