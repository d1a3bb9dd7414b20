// Fit errors as the calibrate commands print them and write them into provenance: percentages with one
// decimal, one table cell per class, totals over the classes that were fitted.
#pragma once

#include <string>

#include "podsim/fit/fit_error.hpp"

namespace podsim::fit {

// 100 * v with one decimal ("12.3").
std::string pct(double v);

// "rows mean|err|% max|err|% [bias%]" for `key`, dashes when the table has no such class.
std::string error_cell(const calibration::ErrorTable& table, const std::string& key, bool with_bias);

// "class 1.2%, class 3.4%" (mean |error| per class); `fitted_only` leaves out "not fitted" classes.
std::string error_summary_text(const calibration::ErrorTable& table, bool fitted_only);

// Row-weighted mean and overall max of |error| over the fitted classes ("not fitted" ones are left out).
calibration::ErrorSummary fitted_total(const calibration::ErrorTable& table);

}  // namespace podsim::fit
