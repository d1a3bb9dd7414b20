#include "podsim/report/links_html.hpp"

#include <fmt/format.h>

#include "podsim/report/html_svg.hpp"

namespace podsim::report {

namespace {

std::string gb(double bytes) {
  return fmt::format("{:.3f}", bytes / 1e9);
}
std::string pct(double x) {
  return fmt::format("{:.1f}%", 100 * x);
}

}  // namespace

std::string links_html_section(const RunResult& r) {
  if (!r.links) return "";
  const auto& t = *r.links;
  std::string out =
      "<div class=\"card\" id=\"links\"><h2>Traffic per link class</h2><div class=\"tablewrap\"><table>"
      "<tr><th>class</th><th>links</th><th>directions used</th><th>GB per step</th><th>capacity GB/s</th>"
      "<th>busy at line rate (s)</th><th>utilization</th><th>busiest link</th></tr>\n";
  for (const auto& c : t.classes)
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.4g}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        html::esc(c.cls), c.links, c.directions_used, gb(c.bytes), c.capacity / 1e9, c.busy_at_line_rate_s,
        pct(c.utilization), pct(c.max_link_utilization));
  out +=
      "</table></div>\n<h2>Hottest links</h2><div class=\"tablewrap\"><table>"
      "<tr><th>from</th><th>to</th><th>class</th><th>GB per step</th><th>utilization</th></tr>\n";
  for (const auto& h : t.hottest)
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       html::esc(h.from), html::esc(h.to), html::esc(h.cls), gb(h.bytes), pct(h.utilization));
  out +=
      "</table></div><p class=\"note\">Bytes from routing every flow of the step; utilization = bytes / "
      "(nominal bandwidth x step time), a lower bound on busy time. Links only folded replicas would use "
      "show no bytes.</p></div>\n";
  return out;
}

std::string with_links_section(std::string page, const RunResult& r) {
  std::string section = links_html_section(r);
  if (section.empty()) return page;
  size_t at = page.rfind("<footer");
  if (at == std::string::npos) at = page.rfind("</body>");
  if (at == std::string::npos) return page + section;
  return page.insert(at, section);
}

}  // namespace podsim::report
