#include "podsim/report/writers.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "podsim/workload/transformer_math.hpp"

namespace podsim::report {
namespace {

constexpr double GiB = 1073741824.0;

std::string num(double v, int digits = 6) {
  return fmt::format("{:.{}g}", v, digits);
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Row summary_row(const RunResult& r) {
  const auto& c = r.step.config;
  bool ok = r.status == "ok";
  auto val = [&](double v, int digits = 6) { return ok ? num(v, digits) : std::string(); };
  Row row = {
      {"devices", std::to_string(r.devices)},
      {"step_time_s", val(r.step_time())},
      {"tflops_per_device", val(r.tflops_per_device(), 5)},
      {"mfu", val(r.mfu(), 4)},
      {"memory_per_device_GiB", num(r.memory_per_device() / GiB, 4)},
      {"tokens_per_s", val(r.tokens_per_s())},
      {"status", r.status},
      {"topology", r.topology_name},
      {"workload", r.workload_name},
      {"device", r.device_name},
      {"model_params_billion", num(workload::total_params(c.model) / 1e9, 5)},
      {"tp", std::to_string(c.parallel.tp)},
      {"pp", std::to_string(c.parallel.pp)},
      {"dp", std::to_string(c.parallel.dp)},
      {"schedule", c.parallel.pp > 1 ? workload::to_string(c.parallel.schedule) : "none"},
      {"virtual_stages", std::to_string(c.parallel.virtual_stages)},
      {"micro_batch", std::to_string(c.training.micro_batch)},
      {"global_batch", std::to_string(c.training.global_batch)},
      {"microbatches", std::to_string(r.step.microbatches)},
      {"recompute", workload::to_string(c.training.recompute)},
      {"sequence_parallel", c.parallel.sequence_parallel ? "true" : "false"},
      {"zero", std::to_string(c.parallel.zero)},
      {"precision", topology::to_string(c.training.precision)},
      {"hfu", val(r.hfu(), 4)},
      {"samples_per_s", val(ok ? c.training.global_batch / r.step_time() : 0)},
      {"compute_s", val(r.mean.compute)},
      {"tp_exposed_s", val(r.mean.tp)},
      {"pp_exposed_s", val(r.mean.pp)},
      {"dp_exposed_s", val(r.mean.dp)},
      {"optimizer_s", val(r.mean.optimizer)},
      {"bubble_s", val(r.mean.bubble)},
      {"memory_capacity_GiB", num(r.device_memory_capacity / GiB, 4)},
      {"simulated_tasks", std::to_string(r.step.graph.tasks.size())},
  };
  return row;
}

std::string csv(const std::vector<Row>& rows) {
  if (rows.empty()) return "";
  std::string out;
  for (size_t i = 0; i < rows[0].size(); ++i) out += (i ? "," : "") + csv_escape(rows[0][i].first);
  out += "\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_escape(row[i].second);
    out += "\n";
  }
  return out;
}

std::string breakdown_csv(const RunResult& r) {
  std::string out =
      "stage,compute_s,tp_exposed_s,pp_exposed_s,dp_exposed_s,optimizer_s,bubble_s,total_s,memory_GiB\n";
  for (const auto& s : r.stages) {
    double mem =
        static_cast<size_t>(s.stage) < r.step.memory.size() ? r.step.memory[s.stage].total() / GiB : 0;
    out += fmt::format("{},{},{},{},{},{},{},{},{}\n", s.stage, num(s.compute), num(s.tp), num(s.pp),
                       num(s.dp), num(s.optimizer), num(s.bubble), num(s.total()), num(mem, 4));
  }
  const auto& m = r.mean;
  out += fmt::format("mean,{},{},{},{},{},{},{},{}\n", num(m.compute), num(m.tp), num(m.pp), num(m.dp),
                     num(m.optimizer), num(m.bubble), num(m.total()), num(r.memory_per_device() / GiB, 4));
  return out;
}

std::string result_json(const RunResult& r) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json summary;
  for (const auto& [k, v] : summary_row(r)) summary[k] = v;
  j["summary"] = summary;
  j["status_detail"] = r.status_detail;
  j["inputs"] = {{"topology_file", r.topology_file}, {"workload_file", r.workload_file}};
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (size_t s = 0; s < r.step.memory.size(); ++s) {
    const auto& m = r.step.memory[s];
    nlohmann::ordered_json st = {{"stage", s},
                                 {"memory_GiB",
                                  {{"weights", m.weights / GiB},
                                   {"gradients", m.gradients / GiB},
                                   {"optimizer", m.optimizer / GiB},
                                   {"activations", m.activations / GiB},
                                   {"buffers", m.buffers / GiB},
                                   {"framework", m.framework / GiB},
                                   {"total", m.total() / GiB}}}};
    if (s < r.stages.size()) {
      const auto& b = r.stages[s];
      st["time_s"] = {{"compute", b.compute}, {"tp_exposed", b.tp},       {"pp_exposed", b.pp},
                      {"dp_exposed", b.dp},   {"optimizer", b.optimizer}, {"bubble", b.bubble}};
    }
    stages.push_back(st);
  }
  j["stages"] = stages;
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  auto add_ops = [&](const char* pass, const workload::PassCost& cost) {
    for (const auto& op : cost.ops)
      ops.push_back({{"pass", pass},
                     {"op", op.name},
                     {"seconds", op.seconds},
                     {"flops", op.flops},
                     {"bytes", op.bytes}});
  };
  add_ops("forward", r.step.layer.forward);
  add_ops("recompute", r.step.layer.recompute);
  add_ops("backward", r.step.layer.backward);
  j["layer_ops_per_microbatch"] = ops;
  j["notes"] = r.step.notes;
  j["search"] = r.search_log;
  j["engine"] = {{"simgrid_parallel_tasks", r.replay.simgrid_activities},
                 {"hosts", r.replay.hosts},
                 {"links", r.replay.links},
                 {"tasks", r.step.graph.tasks.size()}};
  return j.dump(2) + "\n";
}

void atomic_write(const std::string& path, const std::string& content) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp));
    out << content;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp));
  }
  std::filesystem::rename(tmp, path);
}

void write_run_outputs(const RunResult& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  atomic_write(dir + "/summary.csv", csv({summary_row(r)}));
  if (r.status == "ok") atomic_write(dir + "/breakdown.csv", breakdown_csv(r));
  atomic_write(dir + "/result.json", result_json(r));
}

}  // namespace podsim::report
