#include "podsim/report/html.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "podsim/core/units.hpp"
#include "podsim/report/links_html.hpp"
#include "podsim/report/writers.hpp"

extern const unsigned char podsim_chartjs[];
extern const std::size_t podsim_chartjs_size;

namespace podsim::report {
namespace {

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script> must not contain "</" (it would close the script element).
std::string script_json(const nlohmann::json& j) {
  std::string s = j.dump();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/')
      out += "<\\";
    else
      out += s[i];
  }
  return out;
}

const char* kStyle = R"CSS(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1200px;
       color: #1d2733; background: #fafbfc; padding: 0 16px; }
h1 { font-size: 1.5em; margin-bottom: 4px; } h2 { font-size: 1.1em; margin: 0 0 8px; }
.subtitle { color: #5a6b7b; margin-top: 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 16px; }
.card { background: white; border: 1px solid #dde3ea; border-radius: 8px; padding: 14px 16px; }
.card p.note { color: #5a6b7b; font-size: 0.85em; margin: 6px 0 0; }
.chart { position: relative; height: 330px; }
table { border-collapse: collapse; font-size: 0.82em; width: 100%; background: white; }
th, td { border: 1px solid #dde3ea; padding: 4px 6px; text-align: right; white-space: nowrap; }
th { background: #eef2f6; cursor: pointer; position: sticky; top: 0; user-select: none; }
th:hover { background: #dfe7ef; } th.sorted-asc::after { content: " \25B2"; } th.sorted-desc::after { content: " \25BC"; }
td.text { text-align: left; } tr.bad td { color: #9a3b3b; }
.tablewrap { overflow-x: auto; max-height: 640px; border: 1px solid #dde3ea; border-radius: 8px; }
footer { color: #8796a5; font-size: 0.8em; margin-top: 24px; }
)CSS";

const char* kScript = R"JS(
window.addEventListener('error', e => {
  document.body.dataset.errors = (document.body.dataset.errors || '') + e.message + '; ';
});
(function () {
  const D = PODSIM_DATA;
  const col = name => D.columns.indexOf(name);
  const cell = (row, name) => { const i = col(name); return i < 0 ? '' : row[i]; };
  const num = (row, name) => { const v = parseFloat(cell(row, name)); return isNaN(v) ? null : v; };
  const ok = D.rows.filter(r => cell(r, 'status') === 'ok');
  // Short point labels: 'dgx-a100-superpod nodes=8 global_batch=96' (file axes by base name).
  const shortValue = (k, v) => k.endsWith('_file') ? v.split('/').pop().replace(/\.ya?ml$/, '') : v;
  const label = r => {
    const parts = D.axis_keys.map(k => (k.endsWith('_file') ? '' : k.split('.').pop() + '=') + shortValue(k, cell(r, k)));
    if (parts.length) return parts.join(' ');
    return cell(r, 'workload') + ' on ' + cell(r, 'topology');
  };
  const tick = function (value) { const l = this.getLabelForValue(value); return l.length > 30 ? l.slice(0, 29) + '\u2026' : l; };
  const categoryAxis = { stacked: true, ticks: { callback: tick, maxRotation: 50, minRotation: 30, autoSkip: true } };
  const palette = ['#2f6db5', '#e07b39', '#3a9e5b', '#c0392b', '#8e6bbf', '#8c6d46', '#d35fa5', '#6d7b8a', '#b8a828', '#2ab0c4'];
  const categories = [
    ['compute_s', 'compute', '#2f6db5'], ['tp_exposed_s', 'tensor-parallel comm', '#e07b39'],
    ['ep_exposed_s', 'expert all-to-all', '#d35fa5'], ['optimizer_s', 'optimizer', '#8c6d46'],
    ['pp_exposed_s', 'pipeline comm', '#3a9e5b'], ['stream_exposed_s', 'parameter streaming', '#2ab0c4'],
    ['storage_exposed_s', 'host/SSD tiers', '#b8a828'], ['dp_exposed_s', 'data-parallel comm', '#8e6bbf'],
    ['cp_exposed_s', 'context-parallel comm', '#c0392b'], ['bubble_s', 'bubble / idle', '#c9d1da']];
  Chart.defaults.animation = false;
  Chart.defaults.font.size = 11;
  Chart.defaults.plugins.legend.position = 'bottom';
  Chart.defaults.plugins.legend.labels.boxWidth = 12;
  let rendered = 0;
  const note = (id, text) => { const el = document.getElementById(id); if (el) el.textContent = text; };

  // 1. Throughput and scaling efficiency against devices, one series per system.
  const devicesSet = new Set(ok.map(r => num(r, 'devices')));
  if (devicesSet.size >= 2) {
    const systems = {};
    // A series is one machine and model; axes that only size the job (nodes, systems, torus dims, batch)
    // move along it, every other axis (a case, a bandwidth, a parallel setting) starts a series of its own.
    const sizing = /^topology\.(nodes|systems|dims)$|global_batch$|batch_tokens$|_file$/;
    const oneMachine = new Set(ok.map(r => cell(r, 'topology') + '|' + cell(r, 'workload'))).size === 1;
    const seriesOf = r => (oneMachine ? [] : [cell(r, 'topology'), cell(r, 'workload')]).concat(
        D.axis_keys.filter(k => !sizing.test(k)).map(k => k.split('.').pop() + '=' + shortValue(k, cell(r, k)))).join(' \u00b7 ')
        || cell(r, 'topology') + ' \u00b7 ' + cell(r, 'workload');
    ok.forEach(r => { const s = seriesOf(r); (systems[s] = systems[s] || []).push(r); });
    const datasets = [];
    Object.keys(systems).forEach((s, i) => {
      const rows = systems[s].sort((a, b) => num(a, 'devices') - num(b, 'devices'));
      const base = rows[0];
      const basePerDevice = num(base, 'samples_per_s') / num(base, 'devices');
      const color = palette[i % palette.length];
      datasets.push({ label: s + ': TFLOP/s per device', data: rows.map(r => ({ x: num(r, 'devices'), y: num(r, 'tflops_per_device') })),
                      borderColor: color, backgroundColor: color, yAxisID: 'y', showLine: true });
      datasets.push({ label: s + ': scaling efficiency', data: rows.map(r => ({ x: num(r, 'devices'),
                        y: 100 * (num(r, 'samples_per_s') / num(r, 'devices')) / basePerDevice })),
                      borderColor: color, backgroundColor: color, borderDash: [6, 4], yAxisID: 'eff', showLine: true, pointStyle: 'rectRot' });
    });
    new Chart(document.getElementById('scaling'), { type: 'scatter', data: { datasets },
      options: { maintainAspectRatio: false, scales: {
        x: { type: 'logarithmic', title: { display: true, text: 'devices' } },
        y: { title: { display: true, text: 'TFLOP/s per device' }, beginAtZero: true },
        eff: { position: 'right', title: { display: true, text: 'scaling efficiency (%)' }, min: 0, suggestedMax: 110, grid: { drawOnChartArea: false } } } } });
    rendered++;
  } else {
    document.getElementById('scaling-card').style.display = 'none';
  }

  // 2. Where the step time goes, per point.
  const points = ok.slice(0, 200);
  const used = categories.filter(([c]) => points.some(r => (num(r, c) || 0) > 0));
  new Chart(document.getElementById('breakdown'), { type: 'bar',
    data: { labels: points.map(label), datasets: used.map(([c, name, color]) => ({ label: name, data: points.map(r => num(r, c)), backgroundColor: color })) },
    options: { maintainAspectRatio: false, scales: { x: categoryAxis, y: { stacked: true, title: { display: true, text: 'seconds per step' } } } } });
  rendered++;
  if (ok.length > points.length) note('breakdown-note', 'Showing the first ' + points.length + ' of ' + ok.length + ' points.');

  // 3. Memory per device against capacity (points whose memory is known: simulated or out of memory).
  const sized = D.rows.filter(r => num(r, 'memory_per_device_GiB') !== null).slice(0, 200);
  new Chart(document.getElementById('memory'), { type: 'bar',
    data: { labels: sized.map(label), datasets: [
      { type: 'line', label: 'capacity', data: sized.map(r => num(r, 'memory_capacity_GiB')), borderColor: '#c0392b',
        backgroundColor: '#c0392b', pointRadius: sized.length === 1 ? 8 : 0, pointStyle: 'line', borderWidth: 2 },
      { label: 'memory per device', data: sized.map(r => num(r, 'memory_per_device_GiB')),
        backgroundColor: sized.map(r => cell(r, 'status') === 'ok' ? '#2f6db5' : '#e0a0a0') }] },
    options: { maintainAspectRatio: false, scales: { x: Object.assign({}, categoryAxis, { stacked: false }),
                                                      y: { beginAtZero: true, title: { display: true, text: 'GiB' } } } } });
  rendered++;

  // 4. A single run: per-lane breakdown and memory.
  if (D.lanes) {
    const lanes = D.lanes;
    new Chart(document.getElementById('lanes'), { type: 'bar',
      data: { labels: lanes.names, datasets: lanes.categories.map((c, i) => ({ label: c.name, data: c.seconds, backgroundColor: c.color })) },
      options: { maintainAspectRatio: false, scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: 'seconds per step' } } } } });
    new Chart(document.getElementById('lane-memory'), { type: 'bar',
      data: { labels: lanes.names, datasets: lanes.memory.map(m => ({ label: m.name, data: m.GiB, backgroundColor: m.color })) },
      options: { maintainAspectRatio: false, scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: 'GiB per device' } } } } });
    rendered += 2;
  }

  // 5. Sortable table of every point.
  const wanted = ['point'].concat(D.axis_keys, ['status', 'devices', 'device', 'step_time_s', 'tflops_per_device', 'mfu',
    'memory_per_device_GiB', 'tokens_per_s', 'samples_per_s', 'tp', 'pp', 'dp', 'ep', 'micro_batch', 'virtual_stages',
    'experts', 'systems', 'execution_mode', 'bubble_s', 'detail']);
  const shown = wanted.filter((c, i) => col(c) >= 0 && wanted.indexOf(c) === i && D.rows.some(r => cell(r, c) !== ''));
  const table = document.getElementById('points');
  const head = table.createTHead().insertRow();
  shown.forEach(c => { const th = document.createElement('th'); th.textContent = c; head.appendChild(th); });
  const body = table.createTBody();
  const fill = rows => {
    body.innerHTML = '';
    rows.forEach(r => {
      const tr = body.insertRow();
      if (cell(r, 'status') !== 'ok') tr.className = 'bad';
      shown.forEach(c => {
        const td = tr.insertCell(); const v = cell(r, c);
        td.textContent = shortValue(c, v); td.title = v;
        if (isNaN(parseFloat(v))) td.className = 'text';
      });
    });
  };
  let sortCol = null, asc = true;
  head.querySelectorAll('th').forEach((th, i) => th.addEventListener('click', () => {
    const c = shown[i];
    asc = sortCol === c ? !asc : true; sortCol = c;
    head.querySelectorAll('th').forEach(h => h.className = '');
    th.className = asc ? 'sorted-asc' : 'sorted-desc';
    const key = r => { const v = parseFloat(cell(r, c)); return isNaN(v) ? cell(r, c) : v; };
    fill(D.rows.slice().sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); }));
  }));
  fill(D.rows);
  document.body.dataset.rendered = String(rendered);
})();
)JS";

std::string page(const std::string& title, const std::string& subtitle, const nlohmann::json& data,
                 bool lanes) {
  std::string out;
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<title>podsim: {}</title>\n<style>{}</style>\n<script>\n", escape_html(title), kStyle);
  out.append(reinterpret_cast<const char*>(podsim_chartjs), podsim_chartjs_size);
  out += "\n</script>\n</head>\n<body>\n";
  out +=
      fmt::format("<h1>{}</h1>\n<p class=\"subtitle\">{}</p>\n", escape_html(title), escape_html(subtitle));
  out += "<div class=\"grid\">\n";
  out +=
      "<div class=\"card\" id=\"scaling-card\"><h2>Throughput and scaling efficiency</h2><div "
      "class=\"chart\"><canvas id=\"scaling\"></canvas></div>"
      "<p class=\"note\">Solid: TFLOP/s per device (left axis). Dashed: throughput per device relative to "
      "the smallest point of the same system (right axis).</p></div>\n";
  out +=
      "<div class=\"card\"><h2>Where the step time goes</h2><div class=\"chart\"><canvas "
      "id=\"breakdown\"></canvas></div>"
      "<p class=\"note\" id=\"breakdown-note\">Mean over pipeline stages; overlapping work is charged once, "
      "communication only where it is exposed.</p></div>\n";
  out +=
      "<div class=\"card\"><h2>Memory per device</h2><div class=\"chart\"><canvas "
      "id=\"memory\"></canvas></div>"
      "<p class=\"note\">Peak over pipeline stages; red bars did not fit and were not simulated.</p></div>\n";
  if (lanes) {
    out +=
        "<div class=\"card\"><h2>Per pipeline stage</h2><div class=\"chart\"><canvas "
        "id=\"lanes\"></canvas></div></div>\n";
    out +=
        "<div class=\"card\"><h2>Memory per stage</h2><div class=\"chart\"><canvas "
        "id=\"lane-memory\"></canvas></div></div>\n";
  }
  out +=
      "</div>\n<h2 style=\"margin-top:20px\">All points</h2>\n<div class=\"tablewrap\"><table "
      "id=\"points\"></table></div>\n";
  out +=
      "<footer>Generated by podsim. Click a column header to sort. Charts: Chart.js (MIT), "
      "embedded.</footer>\n";
  out += "<script>\nconst PODSIM_DATA = " + script_json(data) + ";\n" + kScript +
         "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace

std::string sweep_report_html(const std::string& title, const std::string& subtitle,
                              const ReportTable& table) {
  nlohmann::json data = {{"columns", table.columns}, {"rows", table.rows}, {"axis_keys", table.axis_keys}};
  return page(title, subtitle, data, false);
}

std::string run_report_html(const RunResult& r) {
  Row row = summary_row(r);
  ReportTable table;
  std::vector<std::string> values;
  for (const auto& [k, v] : row) {
    table.columns.push_back(k);
    values.push_back(v);
  }
  table.rows.push_back(values);
  nlohmann::json data = {
      {"columns", table.columns}, {"rows", table.rows}, {"axis_keys", nlohmann::json::array()}};
  bool lanes = r.ok() && !r.stages.empty();
  if (lanes) {
    const auto& g = r.plan.graph;
    nlohmann::json names = nlohmann::json::array();
    for (const auto& s : r.stages)
      names.push_back(static_cast<size_t>(s.stage) < g.lane_names.size() ? g.lane_names[s.stage]
                                                                         : fmt::format("stage {}", s.stage));
    // One color per category, as in the sweep report's table above (indexed by the enum, not the order).
    auto color = [](workload::Category c) {
      switch (c) {
        case workload::Category::compute: return "#2f6db5";
        case workload::Category::tp: return "#e07b39";
        case workload::Category::ep: return "#d35fa5";
        case workload::Category::optimizer: return "#8c6d46";
        case workload::Category::pp: return "#3a9e5b";
        case workload::Category::stream: return "#2ab0c4";
        case workload::Category::storage: return "#b8a828";
        case workload::Category::dp: return "#8e6bbf";
        case workload::Category::cp: return "#c0392b";
        default: return "#6d7b8a";
      }
    };
    nlohmann::json categories = nlohmann::json::array();
    for (int k = 0; k < workload::kCategories; ++k) {
      auto c = workload::kChargeOrder[k];
      nlohmann::json seconds = nlohmann::json::array();
      double any = 0;
      for (const auto& s : r.stages) seconds.push_back(s[c]), any += s[c];
      if (any > 0)
        categories.push_back({{"name", workload::description(c)}, {"seconds", seconds}, {"color", color(c)}});
    }
    nlohmann::json idle = nlohmann::json::array();
    for (const auto& s : r.stages) idle.push_back(s.idle);
    categories.push_back({{"name", "bubble / idle"}, {"seconds", idle}, {"color", "#c9d1da"}});
    auto mem = [&](const char* name, const char* color, double workload::MemoryBreakdown::*field) {
      nlohmann::json v = nlohmann::json::array();
      for (const auto& m : r.plan.memory) v.push_back(m.*field / GiB);
      return nlohmann::json{{"name", name}, {"GiB", v}, {"color", color}};
    };
    using M = workload::MemoryBreakdown;
    data["lanes"] = {
        {"names", names},
        {"categories", categories},
        {"memory",
         {mem("weights", "#2f6db5", &M::weights), mem("gradients", "#e07b39", &M::gradients),
          mem("optimizer", "#3a9e5b", &M::optimizer), mem("activations", "#8e6bbf", &M::activations),
          mem("buffers", "#b8a828", &M::buffers), mem("framework", "#6d7b8a", &M::framework)}}};
  }
  std::string title = fmt::format("{} on {}", r.workload_name, r.topology_name);
  std::string subtitle =
      r.ok() ? fmt::format("{} — step {:.4g} s, {:.1f} TFLOP/s per device, MFU {:.1f}%", r.plan.description,
                           r.step_time(), r.tflops_per_device(), 100 * r.mfu())
             : fmt::format("{}: {}", r.status, r.status_detail);
  return with_links_section(page(title, subtitle, data, lanes), r);
}

}  // namespace podsim::report
