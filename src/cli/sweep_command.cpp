// podsim sweep / podsim merge: what-if studies over any --set key, on one machine or as a Slurm job array.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/simulation.hpp"
#include "podsim/core/error.hpp"
#include "podsim/report/html.hpp"
#include "podsim/report/writers.hpp"
#include "podsim/study/results.hpp"
#include "podsim/study/study.hpp"
#include "podsim/study/sweep.hpp"

namespace podsim::cli {
namespace {

namespace fs = std::filesystem;

study::ResultRow run_point(const study::Study& s, const study::Point& p) {
  try {
    RunRequest request;
    request.topology_file = p.topology_file;
    request.workload_file = p.workload_file;
    for (const auto& a : p.sets) request.sets.push_back(a.key + "=" + a.value);
    report::RunResult r = simulate(request);
    auto columns = study::results_columns(s);
    report::Row summary = report::summary_row(r);
    std::map<std::string, std::string> values(summary.begin(), summary.end());
    study::ResultRow row;
    row.point = p.index;
    row.id = p.id;
    for (const auto& c : columns) {
      if (c == "point")
        row.cells.push_back(std::to_string(p.index));
      else if (c == "point_id")
        row.cells.push_back(p.id);
      else if (c == "detail")
        row.cells.push_back(r.status_detail);
      else if (p.values.count(c))
        row.cells.push_back(p.values.at(c));
      else
        row.cells.push_back(values.count(c) ? values[c] : "");
    }
    return row;
  } catch (const InputError& e) {
    return study::unrun_row(s, p, "invalid", e.what());
  } catch (const std::exception& e) {
    return study::unrun_row(s, p, "error", e.what());
  }
}

std::pair<int, int> parse_shard(const std::string& text) {
  std::smatch m;
  static const std::regex pattern(R"((\d+)/(\d+))");
  if (!std::regex_match(text, m, pattern))
    throw InputError(fmt::format("--shard {}: expected I/N with 0 <= I < N, e.g. --shard 2/8", text));
  int i = std::stoi(m[1]), n = std::stoi(m[2]);
  if (n < 1 || i >= n) throw InputError(fmt::format("--shard {}: expected I/N with 0 <= I < N", text));
  return {i, n};
}

void write_sweep_json(const study::Study& s, const std::string& out) {
  nlohmann::ordered_json j = {{"name", s.name},
                              {"description", s.description},
                              {"study_file", fs::absolute(s.file).lexically_normal().string()},
                              {"axis_keys", s.axis_keys},
                              {"points", s.points.size()}};
  report::atomic_write(out + "/sweep.json", j.dump(2) + "\n");
}

std::string report_for(const std::string& dir, const study::ResultsTable& table, const std::string& name,
                       const std::string& description, const std::vector<std::string>& axis_keys) {
  report::ReportTable rt;
  rt.columns = table.columns;
  rt.axis_keys = axis_keys;
  for (const auto& r : table.rows) rt.rows.push_back(r.cells);
  std::sort(rt.rows.begin(), rt.rows.end(),
            [](const auto& a, const auto& b) { return std::stoi(a[0]) < std::stoi(b[0]); });
  int ok = 0;
  for (const auto& r : table.rows)
    if (table.columns.size() > 0 &&
        r.cells[std::find(table.columns.begin(), table.columns.end(), "status") - table.columns.begin()] ==
            "ok")
      ok++;
  std::string subtitle = fmt::format("{}{}{} points, {} simulated", description,
                                     description.empty() ? "" : " — ", table.rows.size(), ok);
  std::string path = dir + "/report.html";
  report::atomic_write(path, report::sweep_report_html(name, subtitle, rt));
  return path;
}

// A compact view of the results for the terminal.
void print_table(const study::ResultsTable& table, const std::vector<std::string>& axis_keys) {
  std::vector<std::string> cols = {"point"};
  cols.insert(cols.end(), axis_keys.begin(), axis_keys.end());
  for (const char* c : {"status", "devices", "step_time_s", "tflops_per_device", "mfu",
                        "memory_per_device_GiB", "tokens_per_s", "samples_per_s"})
    cols.push_back(c);
  std::vector<int> idx;
  for (const auto& c : cols)
    idx.push_back(
        static_cast<int>(std::find(table.columns.begin(), table.columns.end(), c) - table.columns.begin()));
  std::vector<std::vector<std::string>> grid;
  std::vector<std::string> head;
  for (const auto& c : cols)
    head.push_back(c.substr(c.rfind('.') == std::string::npos ? 0 : c.rfind('.') + 1));
  grid.push_back(head);
  for (const auto& r : table.rows) {
    std::vector<std::string> line;
    for (size_t k = 0; k < idx.size(); ++k) {
      std::string v = idx[k] < static_cast<int>(r.cells.size()) ? r.cells[idx[k]] : "";
      if (cols[k].size() > 5 &&
          cols[k].compare(cols[k].size() - 5, 5, "_file") == 0)  // a file: its base name
        v = fs::path(v).stem().string();
      line.push_back(v);
    }
    grid.push_back(line);
  }
  std::vector<size_t> width(cols.size(), 0);
  for (const auto& line : grid)
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  size_t shown = 0;
  for (const auto& line : grid) {
    if (shown++ > 41) {
      std::printf("  ... %zu more rows in results.csv\n", grid.size() - 42);
      break;
    }
    std::string text = " ";
    for (size_t i = 0; i < line.size(); ++i)
      text += " " + std::string(width[i] - line[i].size(), ' ') + line[i];
    std::printf("%s\n", text.c_str());
  }
}

std::string self_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "podsim" : p.string();
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  struct Options {
    std::string study, out, shard, partition;
    int jobs = 0, slurm_shards = 4;
    bool resume = false, quiet = false, slurm = false, dry_run = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Run a what-if study (a grid of --set values) and write results.csv and report.html");
  cmd->add_option("study", opt->study, "Study YAML (workloads/studies/*.yaml)")->required();
  cmd->add_option("--out,-o", opt->out, "Results directory")->required();
  cmd->add_option("--jobs,-j", opt->jobs, "Points simulated at once (default: all cores)");
  cmd->add_flag("--resume", opt->resume,
                "Continue an interrupted sweep: skip points whose rows are already in --out");
  cmd->add_option("--shard", opt->shard,
                  "Run only shard I of N (points with index % N == I); default from "
                  "SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT when set");
  cmd->add_flag("--slurm", opt->slurm,
                "Submit the study as a Slurm job array (one shard per task), then 'podsim merge'");
  cmd->add_option("--slurm-shards", opt->slurm_shards, "Array tasks for --slurm (default 4)");
  cmd->add_option("--partition", opt->partition, "Slurm partition for --slurm");
  cmd->add_flag("--dry-run", opt->dry_run, "With --slurm: write the sbatch script but do not submit it");
  cmd->add_flag("--quiet,-q", opt->quiet, "No progress line and no table");
  cmd->footer(
      "A study names a topology and a workload and axes over any --set key (grid, zip, range) with optional\n"
      "filters; see workloads/studies/. Points run in parallel; each finished point is appended to\n"
      "DIR/results.partial.csv at once, so an interrupted sweep loses nothing and --resume continues it.\n"
      "When all points are done they are sorted into DIR/results.csv (identical whatever --jobs) and\n"
      "DIR/report.html is written. Invalid combinations are recorded with status invalid and the reason.\n"
      "On a Slurm cluster: podsim sweep S.yaml --out DIR --slurm (or an array job running\n"
      "'podsim sweep S.yaml --out DIR' per task), then podsim merge DIR.");
  cmd->callback([opt] {
    study::Study s = study::load_study(opt->study);
    fs::create_directories(opt->out);
    write_sweep_json(s, opt->out);
    if (opt->slurm) {
      std::string out = fs::absolute(opt->out).lexically_normal().string();
      std::string script = out + "/sweep.sbatch";
      std::string body = fmt::format(
          "#!/bin/bash\n# Generated by podsim sweep --slurm: one array task per shard of {}.\n"
          "#SBATCH --job-name=podsim-sweep\n#SBATCH --array=0-{}\n#SBATCH --output={}/slurm-%A_%a.out\n{}"
          "exec {} sweep {} --out {} --resume --quiet --shard "
          "\"$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT\" "
          "--jobs \"${{SLURM_CPUS_PER_TASK:-1}}\"\n",
          opt->study, opt->slurm_shards - 1, out,
          opt->partition.empty() ? "" : "#SBATCH --partition=" + opt->partition + "\n", self_path(),
          fs::absolute(opt->study).lexically_normal().string(), out);
      report::atomic_write(script, body);
      fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
      if (opt->dry_run) {
        std::printf("wrote %s (not submitted)\nsubmit: sbatch %s\nthen:   podsim merge %s\n", script.c_str(),
                    script.c_str(), out.c_str());
        return;
      }
      std::string cmdline = fmt::format("sbatch --parsable {}", script);
      std::FILE* pipe = ::popen(cmdline.c_str(), "r");
      if (!pipe) throw InputError("--slurm: cannot run sbatch");
      char buf[256] = {0};
      std::string job = std::fgets(buf, sizeof buf, pipe) ? std::string(buf) : "";
      int rc = ::pclose(pipe);
      if (rc != 0 || job.empty())
        throw InputError(fmt::format("--slurm: '{}' failed; is Slurm available here?", cmdline));
      job.erase(job.find_last_not_of(" \n\r") + 1);
      std::printf("submitted job array %s (%d tasks); when it has finished: podsim merge %s\n", job.c_str(),
                  opt->slurm_shards, out.c_str());
      return;
    }
    study::SweepOptions o;
    o.out = opt->out;
    o.jobs = opt->jobs > 0 ? opt->jobs : std::max(1u, std::thread::hardware_concurrency());
    o.resume = opt->resume;
    std::string shard = opt->shard;
    if (shard.empty() && std::getenv("SLURM_ARRAY_TASK_ID") && std::getenv("SLURM_ARRAY_TASK_COUNT"))
      shard = fmt::format("{}/{}", std::getenv("SLURM_ARRAY_TASK_ID"), std::getenv("SLURM_ARRAY_TASK_COUNT"));
    if (!shard.empty()) std::tie(o.shard, o.shards) = parse_shard(shard);
    bool tty = ::isatty(2) && !opt->quiet;
    o.progress = tty;
    auto outcome = study::run_sweep(s, o, [&s](const study::Point& p) { return run_point(s, p); });
    if (outcome.interrupted) {
      std::fprintf(stderr,
                   "podsim: interrupted; finished points are in %s.partial.csv; continue with --resume\n",
                   study::results_stem(o).c_str());
      std::exit(130);
    }
    std::string report;
    auto table = study::read_results(outcome.results_file);
    if (o.shards == 1) report = report_for(o.out, table, s.name, s.description, s.axis_keys);
    if (opt->quiet) return;
    std::printf(
        "%s: %d points: %d simulated, %d do not fit, %d skipped or invalid, %d failed, %d reused from disk\n",
        s.name.c_str(), outcome.total, outcome.ran, outcome.infeasible, outcome.skipped, outcome.failed,
        outcome.reused);
    print_table(table, s.axis_keys);
    std::printf("wrote %s%s%s\n", outcome.results_file.c_str(), report.empty() ? "" : " and ",
                report.c_str());
    if (o.shards > 1)
      std::printf("shard %d of %d done; when every shard is: podsim merge %s\n", o.shard, o.shards,
                  o.out.c_str());
  });

  struct MergeOptions {
    std::vector<std::string> dirs;
    std::string out;
  };
  auto mopt = std::make_shared<MergeOptions>();
  CLI::App* merge =
      app.add_subcommand("merge", "Join the shard results of a sweep into one results.csv and report.html");
  merge->add_option("dirs", mopt->dirs, "Sweep directories holding results.shard-I-of-N.csv files")
      ->required();
  merge->add_option("--out,-o", mopt->out,
                    "Where to write results.csv and report.html (default: the first directory)");
  merge->callback([mopt] {
    std::string out = mopt->out.empty() ? mopt->dirs.front() : mopt->out;
    nlohmann::json meta;
    std::vector<std::string> files;
    static const std::regex shard_file(R"(results\.shard-(\d+)-of-(\d+)\.csv)");
    std::set<int> shards_seen;
    int shard_count = 0;
    for (const auto& dir : mopt->dirs) {
      if (!fs::is_directory(dir)) throw InputError(fmt::format("{}: not a directory", dir));
      if (meta.is_null() && fs::exists(dir + "/sweep.json"))
        meta = nlohmann::json::parse(std::ifstream(dir + "/sweep.json"));
      for (const auto& e : fs::directory_iterator(dir)) {
        std::smatch m;
        std::string name = e.path().filename().string();
        if (!std::regex_match(name, m, shard_file)) continue;
        int n = std::stoi(m[2]);
        if (shard_count && n != shard_count)
          throw InputError(
              fmt::format("{}: shard files of different splits ({} and {} shards)", dir, shard_count, n));
        shard_count = n;
        shards_seen.insert(std::stoi(m[1]));
        files.push_back(e.path().string());
      }
    }
    if (files.empty())
      throw InputError(
          fmt::format("{}: no results.shard-I-of-N.csv files (did the shards finish?)", mopt->dirs.front()));
    std::vector<int> missing;
    for (int i = 0; i < shard_count; ++i)
      if (!shards_seen.count(i)) missing.push_back(i);
    if (!missing.empty())
      throw InputError(fmt::format(
          "shard(s) {} of {} have no complete results file yet; rerun them (podsim sweep ... --shard I/{} "
          "--resume) and merge again",
          fmt::join(missing, ", "), shard_count, shard_count));
    study::ResultsTable merged;
    std::set<std::string> ids;
    for (const auto& f : files) {
      auto t = study::read_results(f, merged.columns);
      if (merged.columns.empty()) merged.columns = t.columns;
      for (auto& r : t.rows)
        if (ids.insert(r.id).second) merged.rows.push_back(std::move(r));
    }
    if (!meta.is_null() && meta.contains("points") && merged.rows.size() != meta["points"].get<size_t>())
      throw InputError(fmt::format("the shards hold {} of the study's {} points", merged.rows.size(),
                                   meta["points"].get<size_t>()));
    fs::create_directories(out);
    study::write_results(out + "/results.csv", merged);
    std::vector<std::string> axis_keys;
    std::string name = "podsim sweep", description;
    if (!meta.is_null()) {
      axis_keys = meta.value("axis_keys", std::vector<std::string>{});
      name = meta.value("name", name);
      description = meta.value("description", "");
    }
    auto table = study::read_results(out + "/results.csv");
    std::string report = report_for(out, table, name, description, axis_keys);
    std::printf("merged %zu shard files, %zu points -> %s/results.csv and %s\n", files.size(),
                merged.rows.size(), out.c_str(), report.c_str());
  });
}

}  // namespace podsim::cli
