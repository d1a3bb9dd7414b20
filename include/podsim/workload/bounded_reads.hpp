// Reads of numeric YAML keys with a range, for workload readers: a value outside the range is an
// InputError naming file:line:col, the field and the valid range, never a silent overflow when the value
// is narrowed to `int` or multiplied by other sizes (the issue-11 driver found `dimension: 1e9` wrapping
// an int and `capacity_factor: 1e300` turning into inf in the CSV).
#pragma once

#include <string>
#include <string_view>

namespace podsim {
class ConfigNode;
}

namespace podsim::workload {

// A required whole number in [lo, hi] (hi <= INT_MAX).
int int_in(const ConfigNode& node, std::string_view key, long long lo, long long hi);
// A whole number in [lo, hi] (hi <= INT_MAX), or `fallback` when the key is absent.
int int_in_or(const ConfigNode& node, std::string_view key, long long lo, long long hi, long long fallback);
// A whole number in [lo, hi] or `auto` (returned as 0), or `fallback` when the key is absent.
int int_in_or_auto(const ConfigNode& node, std::string_view key, long long lo, long long hi,
                   long long fallback);
// A finite number in [lo, hi], or `fallback` when the key is absent. `why` (may be empty) is appended to
// the error: what the field means or what real systems use.
double number_in_or(const ConfigNode& node, std::string_view key, double lo, double hi, double fallback,
                    const std::string& why = "");

}  // namespace podsim::workload
