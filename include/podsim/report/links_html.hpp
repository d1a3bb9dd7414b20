// The single-run HTML report's link section (`podsim run --links`): bytes and utilization per link class
// and the hottest links, as a small table. Its own file so that html.cpp needs one call.
#pragma once

#include <string>

#include "podsim/report/run_result.hpp"

namespace podsim::report {

// An HTML fragment (a card with two tables); "" when the run has no link data.
std::string links_html_section(const RunResult& r);
// `page` with links_html_section(r) inserted before its footer (or before </body>).
std::string with_links_section(std::string page, const RunResult& r);

}  // namespace podsim::report
