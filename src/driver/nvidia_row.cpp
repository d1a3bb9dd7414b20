#include "podsim/driver/nvidia_row.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace podsim::driver {
namespace {

bool unstated(const std::string& cell) {
  return cell.empty() || cell == "n/a" || cell == "N/A";
}

std::optional<double> number_cell(const CsvTable& table, size_t i, const std::string& column) {
  if (!table.has_column(column) || unstated(table.text(i, column))) return std::nullopt;
  return table.number(i, column);  // InputError (file:line) for text that is not a number
}

std::optional<long long> integer_cell(const CsvTable& table, size_t i, const std::string& column) {
  auto v = number_cell(table, i, column);
  if (!v) return std::nullopt;
  if (*v < 0 || *v != std::floor(*v) || *v > 1e12)
    throw InputError(fmt::format("{}:{}: column {}: '{}' is not a non-negative whole number", table.file,
                                 table.row_lines[i], column, table.text(i, column)));
  return static_cast<long long>(*v);
}

std::string not_stated(const NvidiaRow& row) {
  const std::pair<const char*, const std::optional<long long>*> required[] = {
      {"num_gpus", &row.num_gpus}, {"gbs", &row.gbs}, {"mbs", &row.mbs},
      {"seq_len", &row.seq_len},   {"tp", &row.tp},   {"pp", &row.pp}};
  for (const auto& [name, value] : required)
    if (!*value || **value == 0) return fmt::format("the table does not state {}", name);
  if (row.precision.empty()) return "the table does not state the precision";
  if (!row.published) return "no published tokens_per_sec_per_gpu";
  return "";
}

// Why the row cannot be a podsim run of the mapping's presets, or "" when it can.
std::string inexpressible(const NvidiaRow& row, const PresetMapping& mapping) {
  auto system = mapping.systems.find(row.system);
  if (system == mapping.systems.end())
    return fmt::format("system '{}' is not in {}", row.system, mapping.file);
  auto model = mapping.models.find(row.model);
  if (model == mapping.models.end()) return fmt::format("model '{}' is not in {}", row.model, mapping.file);
  if (model->second.file.empty()) return model->second.reason;
  if (system->second.file.empty()) return system->second.reason;
  if (std::string why = not_stated(row); !why.empty()) return why;
  if (podsim_precision(row.precision).empty())
    return fmt::format("precision '{}' has no podsim training.precision", row.precision);
  long long mp = *row.tp * *row.pp * row.cp.value_or(1);
  if (mp == 0 || *row.num_gpus % mp)
    return fmt::format("num_gpus {} is not divisible by tp*pp*cp = {}", *row.num_gpus, mp);
  // The published accumulation steps must be the ones the batch implies, or a column was misread.
  long long per_step = *row.mbs * (*row.num_gpus / mp);
  if (row.ga && *row.ga * per_step != *row.gbs)
    return fmt::format("ga {} disagrees with gbs / (mbs * dp) = {} / {}", *row.ga, *row.gbs, per_step);
  return "";
}

// "moe.dispatcher=alltoall; moe.overlap=combined_1f1b" -> {"moe.dispatcher=alltoall", ...}.
std::vector<std::string> settings_cell(const CsvTable& table, size_t i) {
  std::vector<std::string> out;
  if (!table.has_column("settings") || unstated(table.text(i, "settings"))) return out;
  std::string cell = table.text(i, "settings");
  auto fail = [&](const std::string& item, const std::string& why) {
    return InputError(
        fmt::format("{}:{}: column settings: '{}' {}", table.file, table.row_lines[i], item, why));
  };
  size_t start = 0;
  while (start <= cell.size()) {
    size_t end = cell.find(';', start);
    std::string item =
        trimmed(cell.substr(start, end == std::string::npos ? std::string::npos : end - start));
    start = end == std::string::npos ? cell.size() + 1 : end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw fail(item, "is not key=value (e.g. moe.dispatcher=alltoall; entries separated by ';')");
    std::string key = trimmed(item.substr(0, eq));
    if (std::string why = settable_key_problem(key); !why.empty())
      throw fail(item, "is not allowed: a row " + why);
    out.push_back(key + "=" + trimmed(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace

NvidiaRow read_nvidia_row(const CsvTable& table, size_t i) {
  NvidiaRow r;
  r.row_id = table.text(i, "row_id");
  r.system = table.text(i, "system");
  r.model = table.text(i, "model");
  r.precision = table.text(i, "precision");
  if (table.has_column("release") && !unstated(table.text(i, "release"))) {
    r.release = table.text(i, "release");
    if (!release_parts(r.release))
      throw InputError(fmt::format("{}:{}: column release: '{}' is not a release such as 25.09 or 26.02.01",
                                   table.file, table.row_lines[i], r.release));
  }
  r.num_gpus = integer_cell(table, i, "num_gpus");
  r.gbs = integer_cell(table, i, "gbs");
  r.mbs = integer_cell(table, i, "mbs");
  r.seq_len = integer_cell(table, i, "seq_len");
  r.fsdp = integer_cell(table, i, "fsdp");
  r.tp = integer_cell(table, i, "tp");
  r.pp = integer_cell(table, i, "pp");
  r.cp = integer_cell(table, i, "cp");
  r.vp = integer_cell(table, i, "vp");
  r.ep = integer_cell(table, i, "ep");
  r.ga = integer_cell(table, i, "ga");
  r.published = number_cell(table, i, "tokens_per_sec_per_gpu");
  r.settings = settings_cell(table, i);
  return r;
}

std::string settings_text(const NvidiaRow& row) {
  std::string out;
  for (const auto& s : row.settings) out += (out.empty() ? "" : "; ") + s;
  return out;
}

std::string podsim_precision(const std::string& table_precision) {
  static const std::map<std::string, std::string> names = {
      {"BF16", "bf16"},   {"FP8", "fp8"},      {"FP8-CS", "fp8"}, {"FP8-BLOCK", "fp8_block"},
      {"MXFP8", "mxfp8"}, {"FP8-MX", "mxfp8"}, {"NVFP4", "nvfp4"}};
  auto it = names.find(table_precision);
  return it == names.end() ? "" : it->second;
}

RowPlan plan_nvidia_row(const NvidiaRow& row, const PresetMapping& mapping, int devices_per_node) {
  RowPlan plan;
  plan.not_expressible = inexpressible(row, mapping);
  if (!plan.not_expressible.empty()) return plan;
  const PresetEntry& model = mapping.models.at(row.model);
  long long cp = row.cp.value_or(1), vp = row.vp.value_or(1), fsdp = row.fsdp.value_or(0);
  plan.dp = static_cast<int>(*row.num_gpus / (*row.tp * *row.pp * cp));
  plan.request.topology_file = mapping.systems.at(row.system).file;
  plan.request.workload_file = model.file;
  auto& s = plan.request.sets;
  const Recipe& recipe = mapping.recipes.at(model.recipe);
  s = recipe.sets;
  if (auto on = recipe.system_sets.find(row.system); on != recipe.system_sets.end())
    s.insert(s.end(), on->second.begin(), on->second.end());
  // A row of an older release ran the configuration and the libraries of its time (a row without a
  // release: the newest).
  if (!row.release.empty()) {
    std::vector<int> release = *release_parts(row.release);
    for (const auto& older : recipe.before_release)
      if (release < older.parts)
        if (auto on = older.system_sets.find(row.system); on != older.system_sets.end())
          s.insert(s.end(), on->second.begin(), on->second.end());
    for (const auto& older : mapping.systems.at(row.system).before_release)
      if (release < older.parts) s.insert(s.end(), older.sets.begin(), older.sets.end());
  }
  for (const auto& setting : row.settings) s.push_back("workload." + setting);
  // Exactly num_gpus devices: whole nodes of the preset, and dp chosen so tp*pp*cp*dp = num_gpus.
  s.push_back(fmt::format("topology.nodes={}", (*row.num_gpus + devices_per_node - 1) / devices_per_node));
  s.push_back(fmt::format("workload.model.seq_len={}", *row.seq_len));
  s.push_back(fmt::format("workload.parallel.tp={}", *row.tp));
  s.push_back(fmt::format("workload.parallel.pp={}", *row.pp));
  // Always: a preset may carry its usual cp (llama3.1-405b.yaml: 2), which a cp 1 row must undo.
  s.push_back(fmt::format("workload.parallel.cp={}", cp));
  // Expert parallelism (MoE presets; a dense preset given ep > 1 fails its own validation, named per row).
  if (row.ep.value_or(1) != 1) s.push_back(fmt::format("workload.parallel.ep={}", *row.ep));
  s.push_back(fmt::format("workload.parallel.dp={}", plan.dp));
  // NeMo's virtual_pipeline_model_parallel_size: model chunks per stage; none or 1 = plain 1F1B.
  s.push_back(fmt::format("workload.parallel.schedule={}", vp > 1 ? "interleaved" : "1f1b"));
  s.push_back(fmt::format("workload.parallel.virtual_stages={}", vp > 1 ? vp : 1));
  // fsdp 0 / empty: DDP with the distributed optimizer (the recipe's zero); N > 0: FSDP sharded over N.
  if (fsdp > 0) {
    s.push_back("workload.parallel.zero=3");
    s.push_back(fmt::format("workload.parallel.shard_group={}", fsdp));
  }
  s.push_back(fmt::format("workload.training.global_batch={}", *row.gbs));
  s.push_back(fmt::format("workload.training.micro_batch={}", *row.mbs));
  s.push_back(fmt::format("workload.training.precision={}", podsim_precision(row.precision)));
  return plan;
}

}  // namespace podsim::driver
