// How a goodput estimate reads: lines for the terminal summary, goodput.csv (one row of figures) and
// goodput_components.csv (the failure rate by component), units in every column name.
#pragma once

#include <string>

#include "podsim/reliability/goodput_assessment.hpp"

namespace podsim::report {

std::string goodput_summary(const reliability::GoodputAssessment& a);
std::string goodput_csv(const reliability::GoodputAssessment& a);
std::string goodput_components_csv(const reliability::GoodputAssessment& a);

}  // namespace podsim::report
