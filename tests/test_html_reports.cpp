// The HTML reports, read back from their SVG: what-if comparison, scaling charts, heatmap, timeline and
// validation scatter show what they claim (every series drawn, ticks within range, labels whole).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/driver/nvidia_validation.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/driver/validate.hpp"
#include "podsim/report/html.hpp"
#include "podsim/report/html_validate.hpp"
#include "podsim/study/study.hpp"
#include "test_helpers.hpp"

namespace podsim {
namespace {

using Attrs = std::map<std::string, std::string>;

std::string fmt_num(double v) {
  return fmt::format("{:g}", v);
}

// Opening tags `<name ...>` whose attribute `cls`-match holds (class attribute starts with `cls`).
std::vector<Attrs> tags(const std::string& html, const std::string& name, const std::string& cls = "") {
  std::vector<Attrs> out;
  std::regex tag("<" + name + "\\b([^>]*)>"), attr("([a-z-]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tag); it != std::sregex_iterator(); ++it) {
    Attrs a;
    std::string body = (*it)[1];
    for (auto j = std::sregex_iterator(body.begin(), body.end(), attr); j != std::sregex_iterator(); ++j)
      a[(*j)[1]] = (*j)[2];
    if (cls.empty() || a["class"].rfind(cls, 0) == 0) out.push_back(a);
  }
  return out;
}

// Text of <text class="label">...</text> elements.
std::vector<std::string> labels(const std::string& html) {
  std::vector<std::string> out;
  std::regex re("<text class=\"label\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// The part of `html` inside the section with this id.
std::string section(const std::string& html, const std::string& id) {
  auto b = html.find("id=\"" + id + "\"");
  if (b == std::string::npos) return "";
  return html.substr(b, html.find("</section>", b) - b);
}

report::ReportTable table(const std::vector<std::string>& axes,
                          const std::vector<std::vector<std::string>>& rows) {
  report::ReportTable t;
  t.columns = {"point"};
  t.columns.insert(t.columns.end(), axes.begin(), axes.end());
  for (const char* c :
       {"status", "devices", "step_time_s", "tokens_per_s", "tflops_per_device", "memory_per_device_GiB",
        "memory_capacity_GiB", "compute_s", "detail", "topology", "workload"})
    t.columns.push_back(c);
  t.rows = rows;
  t.axis_keys = axes;
  return t;
}

std::vector<std::string> row(int point, std::vector<std::string> axes, const std::string& status,
                             double devices, double step, double tokens,
                             const std::string& topo = "A100 pod") {
  std::vector<std::string> r = {std::to_string(point)};
  r.insert(r.end(), axes.begin(), axes.end());
  bool ok = status == "ok";
  for (std::string v :
       {status, fmt_num(devices), ok ? fmt_num(step) : "", ok ? fmt_num(tokens) : "",
        ok ? fmt_num(tokens / devices / 10) : "", std::string("60"), std::string("80"),
        ok ? fmt_num(step * 0.8) : "",
        std::string(ok ? "" : "needs 95 GiB of 80 GiB on stage 0, a long reason"), topo, std::string("GPT")})
    r.push_back(v);
  return r;
}

TEST(HtmlReport, WhatIfStudyComparesCasesAgainstTheBaselineInsteadOfScaling) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> cases = {
      "baseline", "pp16",     "64-nodes", "selective-recompute+sequence-parallel-long-name",
      "h100",     "tp4-pp16", "oom-case"};
  for (size_t i = 0; i < cases.size(); ++i)
    rows.push_back(
        row(i, {cases[i]}, i == 6 ? "out_of_memory" : "ok", i == 2 ? 512 : 1024, 28 - i, 1e5 + 1e4 * i));
  std::string html = report::sweep_report_html("what if", "", table({"case"}, rows));
  EXPECT_EQ(section(html, "scaling-card"), "") << "no scaling efficiency where no series varies the devices";
  std::string cmp = section(html, "comparison-card");
  auto bars = tags(cmp, "rect", "bar");
  EXPECT_EQ(bars.size(), cases.size() - 1) << "a bar per simulated case";
  EXPECT_EQ(tags(cmp, "rect", "bar best").size(), 1u);
  EXPECT_EQ(tags(cmp, "rect", "bar best")[0]["data-label"], "tp4-pp16");
  std::set<std::string> shown;
  for (const auto& l : labels(cmp)) shown.insert(l);
  for (const auto& c : cases)
    EXPECT_TRUE(shown.count(c) || shown.count(c + " (baseline)")) << c << " not cut";
  for (const auto& l : labels(html)) EXPECT_EQ(l.find("\u2026"), std::string::npos) << l;
  EXPECT_NE(html.find("<th>speedup</th>"), std::string::npos);
  EXPECT_NE(html.find("1.000x"), std::string::npos) << "the baseline against itself";
  EXPECT_NE(section(html, "memory-card").find("a long reason"), std::string::npos)
      << "OOM reason shown, wrapped";
  // Ticks within the axis range, axis covering the data.
  auto svg = tags(cmp, "svg", "chart")[0];
  double lo = std::stod(svg["data-axis-lo"]), hi = std::stod(svg["data-axis-hi"]);
  for (auto& t : tags(cmp, "text", "tick")) {
    EXPECT_GE(std::stod(t["data-value"]), lo);
    EXPECT_LE(std::stod(t["data-value"]), hi);
  }
  for (auto& b : bars) EXPECT_LE(std::stod(b["data-value"]), hi);
}

// results.csv's memory components (study::memory_columns) stack in the memory chart, per point; a table
// from before they existed keeps the one-segment bars.
TEST(HtmlReport, StudyMemoryChartStacksTheComponentsPerPoint) {
  auto t = table({"case"}, {row(0, {"a"}, "ok", 8, 1, 1e5), row(1, {"b"}, "out_of_memory", 8, 1, 1e5)});
  std::string plain = section(report::sweep_report_html("s", "", t), "memory-card");
  EXPECT_NE(plain.find("data-category=\"memory per device\""), std::string::npos);
  for (const char* c : {"memory_weights_GiB", "memory_gradients_GiB", "memory_optimizer_GiB",
                        "memory_activations_GiB", "memory_buffers_GiB", "memory_framework_GiB"})
    t.columns.push_back(c);
  for (auto& r : t.rows)
    for (const char* v : {"10", "20", "15", "12", "2", "1"}) r.push_back(v);
  std::string m = section(report::sweep_report_html("s", "", t), "memory-card");
  for (const char* part : {"weights", "gradients", "optimizer", "activations", "buffers", "framework"})
    EXPECT_NE(m.find(fmt::format("data-category=\"{}\"", part)), std::string::npos) << part;
  EXPECT_EQ(m.find("data-category=\"memory per device\""), std::string::npos);
  EXPECT_NE(m.find("a long reason"), std::string::npos) << "the out-of-memory reason is still shown";
}

TEST(HtmlReport, NamedBaselineIsTheReference) {
  std::vector<std::vector<std::string>> rows = {row(0, {"a"}, "ok", 8, 2, 100),
                                                row(1, {"b"}, "ok", 8, 1, 200)};
  auto t = table({"case"}, rows);
  t.baseline = "b";
  std::string html = report::sweep_report_html("t", "", t);
  EXPECT_NE(html.find("0.500x"), std::string::npos);
  EXPECT_NE(html.find("b (baseline)"), std::string::npos);
}

TEST(HtmlReport, StudyBaselineKeyNamesACase) {
  std::string head = "name: s\ntopology: t.yaml\nworkload: w.yaml\n";
  std::string cases = "axes:\n  - cases:\n      - {name: a}\n      - {name: b, set: {topology.nodes: 2}}\n";
  EXPECT_EQ(study::load_study_text(head + "baseline: b\n" + cases, "s.yaml", ".").baseline, "b");
  std::string e =
      testing::error_of([&] { study::load_study_text(head + "baseline: c\n" + cases, "s.yaml", "."); });
  EXPECT_NE(e.find("no case named 'c'; the cases are a, b"), std::string::npos) << e;
  EXPECT_NE(e.find("s.yaml:4"), std::string::npos) << e;
}

TEST(HtmlReport, WeakScalingSeriesAreDistinctWithTicksAtTheDeviceCounts) {
  std::vector<std::vector<std::string>> rows;
  int p = 0;
  for (std::string topo : {"a100.yaml", "h100.yaml"})
    for (int nodes : {8, 16, 32, 64, 128})
      rows.push_back(row(p++, {topo, std::to_string(nodes)}, "ok", nodes * 8, 20,
                         nodes * 8 * 100.0 * (1 - nodes / 1e3), topo));
  std::string html = report::sweep_report_html("weak", "", table({"topology", "topology.nodes"}, rows));
  std::string s = section(html, "scaling-card");
  auto series = tags(s, "g", "series");
  ASSERT_EQ(series.size(), 2u);
  for (auto& g : series) EXPECT_EQ(g["data-points"], "5");
  std::set<std::string> paths;
  for (auto& pth : tags(s, "path")) paths.insert(pth["stroke-dasharray"]);
  EXPECT_GE(paths.size(), 2u) << "series differ in dash";
  std::set<double> xt;
  std::regex re("<g class=\"x\"><text class=\"tick\"[^>]*data-value=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it)
    xt.insert(std::stod((*it)[1]));
  EXPECT_EQ(xt, (std::set<double>{64, 128, 256, 512, 1024}));
  EXPECT_NE(section(html, "efficiency-card"), "");
  EXPECT_NE(s.find("class=\"legend\""), std::string::npos) << "legend as wrapping HTML below the chart";
}

TEST(HtmlReport, TwoKeyGridGetsAHeatmapWithEveryCellMarked) {
  std::vector<std::vector<std::string>> rows;
  int p = 0;
  for (int tp : {2, 4, 8})
    for (int pp : {4, 8, 16, 32}) {
      if (tp * pp > 128) continue;  // filtered out
      rows.push_back(row(p++, {std::to_string(tp), std::to_string(pp)},
                         tp == 2 && pp == 4 ? "out_of_memory" : "ok", 1024, 30.0 / tp, 1e4 * tp + pp));
    }
  std::string html =
      report::sweep_report_html("grid", "", table({"workload.parallel.tp", "workload.parallel.pp"}, rows));
  std::string h = section(html, "heatmap-card");
  auto svg = tags(h, "svg", "chart");
  ASSERT_EQ(svg.size(), 1u);
  EXPECT_EQ(svg[0]["data-columns"], "4");
  EXPECT_EQ(svg[0]["data-rows"], "3");
  auto cells = tags(h, "g", "cell");
  EXPECT_EQ(cells.size(), 12u);
  int missing = 0;
  for (auto& c : cells) missing += c.count("data-missing");
  EXPECT_EQ(missing, 2) << "one OOM, one filtered";
  EXPECT_NE(h.find(">OOM<"), std::string::npos);
  EXPECT_NE(h.find("\u2014"), std::string::npos);
  EXPECT_EQ(tags(h, "g", "cell best").size(), 1u);
  EXPECT_NE(h.find("heat-scale"), std::string::npos) << "colour legend";
}

TEST(HtmlReport, SingleRunHasAStageTimelineAndMemoryAgainstCapacity) {
  driver::RunRequest req{testing::source_path("topologies/dgx-a100-superpod.yaml"),
                         testing::source_path("workloads/gpt3-175b.yaml"),
                         {"topology.nodes=8", "workload.training.global_batch=16"}};
  auto r = driver::simulate(req);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  std::string html = report::run_report_html(r);
  std::string g = section(html, "timeline-card");
  auto svg = tags(g, "svg", "chart");
  ASSERT_EQ(svg.size(), 1u);
  EXPECT_EQ(svg[0]["data-lanes"], std::to_string(r.plan.graph.stages));
  auto slices = tags(g, "rect", "slice");
  EXPECT_GT(slices.size(), 10u);
  std::set<std::string> cats;
  for (auto& s : slices) cats.insert(s["data-category"]);
  for (auto& s : tags(g, "path", "slice-")) cats.insert(s["data-category"]);  // slices without a tooltip
  EXPECT_TRUE(cats.count("compute") && cats.count("pp")) << "device and pipeline work drawn";
  EXPECT_LT(html.size(), 3u << 20) << "merged slices keep the file small";
  std::string m = section(html, "memory-card");
  EXPECT_EQ(tags(m, "line", "limit").size(), r.plan.memory.size()) << "capacity per lane";
  EXPECT_NE(m.find("data-category=\"weights\""), std::string::npos);
  EXPECT_NE(html.find("<title>"), std::string::npos);
  if (const char* dir = std::getenv("PODSIM_HTML_OUT")) std::ofstream(std::string(dir) + "/run.html") << html;
}

// Slices a Gantt rect or thin path stands for, from its tooltip ("N slices, ..." / "N short slices", else 1).
int slices_in(const std::string& title) {
  std::smatch m;
  static const std::regex many(R"(: (\d+) (short )?slices)");
  return std::regex_search(title, m, many) ? std::stoi(m[1]) : 1;
}

// Big steps (GPT-3 175B on the full A100 SuperPOD: ~10k slices, most under a pixel; Llama 3.1 405B on 1,024
// H100s: ~4k slices of 1 to 4 px) stay small pages: slices without a tooltip of their own are strokes or
// boxes of one path per row and category, and every slice is still drawn, in some rect or path.
void expect_small_timeline(const std::string& topo, const std::string& work, std::vector<std::string> sets) {
  driver::RunRequest req{testing::source_path(topo), testing::source_path(work), std::move(sets)};
  auto r = driver::simulate(req);
  ASSERT_TRUE(r.ok()) << r.status_detail;
  std::string html = report::run_report_html(r);
  EXPECT_LT(html.size(), 500u << 10) << work;
  std::string g = section(html, "timeline-card");
  int drawn = 0, marks = 0, rects = 0;  // parsed by hand: std::regex recurses per character of a long path
  for (const std::string open :
       {"<rect class=\"slice\"", "<path class=\"slice-thin\"", "<path class=\"slice-small\""})
    for (size_t at = g.find(open); at != std::string::npos; at = g.find(open, at + 1)) {
      size_t tb = g.find("<title>", at), te = g.find("</title>", tb);
      ASSERT_TRUE(tb != std::string::npos && te != std::string::npos);
      drawn += slices_in(g.substr(tb + 7, te - tb - 7));
      if (open[1] != 'p') {
        ++rects;
        continue;
      }
      size_t db = g.find(" d=\"", at) + 4, de = g.find('"', db);
      EXPECT_NE(g.substr(at, db - at).find("data-category=\""), std::string::npos);
      for (size_t m = g.find('M', db); m < de; m = g.find('M', m + 1)) {
        double x = std::strtod(g.c_str() + m + 1, nullptr);
        EXPECT_TRUE(x >= 110 && x <= 1170) << x;  // inside the plot
        ++marks;
      }
    }
  EXPECT_GT(marks, 100) << work << ": short slices are drawn as path marks";
  EXPECT_GT(rects, 100) << work << ": the widest keep their own tooltip";
  int expected = 0;  // the task segments the chart draws (lanes up to 32, as html_gantt.cpp)
  const auto& graph = r.plan.graph;
  for (size_t i = 0; i < graph.tasks.size(); ++i) {
    const auto& t = graph.tasks[i];
    const auto& tt = r.replay.tasks[i];
    double c = t.compute_seconds > 0 ? tt.compute_end : tt.start;
    for (int lane = 0; lane < std::min(graph.stages, 32); ++lane)
      if (t.stage == lane || t.stage < 0 || (t.peer_stage == lane && t.kind == plan::TaskKind::transfer))
        expected += (c > tt.start) + (tt.end > c);
  }
  EXPECT_EQ(drawn, expected) << work;
}

TEST(HtmlReport, BigRunTimelinesStaySmallAndDrawEverySlice) {
  expect_small_timeline("topologies/dgx-a100-superpod.yaml", "workloads/gpt3-175b.yaml", {});
  expect_small_timeline("topologies/dgx-h100-superpod.yaml", "workloads/llama3.1-405b.yaml",
                        {"topology.nodes=128"});
}

TEST(HtmlReport, ValidationScatterAndTableSortedByError) {
  report::ValidationReport v{"validate", "", "TFLOP/s per GPU", {}};
  v.rows = {{"row 1", 100, 103, 3, "ok", ""},
            {"row 2", 150, 110, -26.7, "ok", ""},
            {"row 3", 120, 130, 8.3, "ok", ""},
            {"row 4", 140, 0, 0, "out_of_memory", "needs more"}};
  std::string html = report::validation_report_html(v);
  EXPECT_EQ(tags(html, "circle", "point").size(), 3u);
  EXPECT_EQ(tags(html, "polygon", "band").size(), 2u);
  EXPECT_EQ(tags(html, "line", "identity").size(), 1u);
  auto p1 = html.find(">row 2<"), p2 = html.find(">row 3<"), p3 = html.find(">row 1<"),
       p4 = html.find(">row 4<");
  EXPECT_TRUE(p1 < p2 && p2 < p3 && p3 < p4) << "largest |error| first, unpredicted rows last";
}

TEST(HtmlReport, ValidateWritesValidateHtmlNextToItsCsvForBothSchemas) {
  auto dir = std::filesystem::temp_directory_path() / "podsim-validate-html";
  std::filesystem::remove_all(dir);
  driver::Validation sc21;
  driver::ValidationRow r1;
  r1.params_billion = "175", r1.gpus = 1024, r1.published_tflops = 153, r1.predicted_tflops = 158,
  r1.error_percent = 3.3, r1.status = "ok";
  sc21.rows = {r1};
  driver::write_validation_csv((dir / "sc21").string(), sc21);
  std::ifstream a(dir / "sc21" / "validate.html");
  std::string html((std::istreambuf_iterator<char>(a)), {});
  EXPECT_EQ(tags(html, "circle", "point").size(), 1u);
  EXPECT_NE(html.find("GPT 175B, 1024 GPUs"), std::string::npos);
  driver::NvidiaValidation nv;
  driver::NvidiaRowResult n1;
  n1.row.row_id = "39", n1.row.model = "Llama3.1-405B", n1.row.published = 326, n1.predicted = 366;
  n1.error_percent = 12.2, n1.status = "ok";
  driver::NvidiaRowResult n2 = n1;
  n2.row.row_id = "81", n2.status = "error", n2.detail = "layers=61 is not divisible";
  nv.rows = {n1, n2};
  driver::write_nvidia_validation_csv((dir / "nv").string(), nv);
  std::ifstream b(dir / "nv" / "validate.html");
  html.assign((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(tags(html, "circle", "point").size(), 1u);
  EXPECT_NE(html.find("layers=61 is not divisible"), std::string::npos) << "the failed row with its reason";
  EXPECT_NE(html.find("tokens/s per GPU"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Writes the study reports of result tables given as PODSIM_HTML_CSV=a.csv:case,b.csv:topology,... (for
// looking at them in a browser); nothing without the variable.
TEST(HtmlReport, WritesReportsOfGivenResults) {
  const char* spec = std::getenv("PODSIM_HTML_CSV");
  const char* dir = std::getenv("PODSIM_HTML_OUT");
  if (!spec || !dir) GTEST_SKIP() << "PODSIM_HTML_CSV / PODSIM_HTML_OUT not set";
  std::stringstream ss(spec);
  std::string item;
  int n = 0;
  while (std::getline(ss, item, ',')) {
    auto c = item.find(':');
    auto csv = read_csv(item.substr(0, c));
    report::ReportTable t{csv.columns, csv.rows, {}, ""};
    std::stringstream keys(item.substr(c + 1));
    std::string k;
    while (std::getline(keys, k, '+')) t.axis_keys.push_back(k);
    ++n;
    std::ofstream(std::string(dir) + "/study" + std::to_string(n) + ".html")
        << report::sweep_report_html(item, "", t);
  }
}

}  // namespace
}  // namespace podsim
