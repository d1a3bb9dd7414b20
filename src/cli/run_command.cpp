#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include "podsim/cli/commands.hpp"
#include "podsim/cli/job_import_options.hpp"
#include "podsim/core/error.hpp"
#include "podsim/driver/goodput_assessment.hpp"
#include "podsim/driver/shared_fabric.hpp"
#include "podsim/driver/simulation.hpp"
#include "podsim/reliability/reliability_profile.hpp"
#include "podsim/report/goodput_text.hpp"
#include "podsim/report/html.hpp"
#include "podsim/report/shared_fabric_text.hpp"
#include "podsim/report/summary_text.hpp"
#include "podsim/report/trace.hpp"
#include "podsim/report/writers.hpp"

namespace podsim::cli {

std::string find_project_file(const std::string& relative) {
  namespace fs = std::filesystem;
  if (fs::exists(relative)) return relative;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
      if (fs::exists(dir / relative)) return (dir / relative).string();
  return relative;
}

namespace {

constexpr const char* kDefaultReliabilityProfile = "calibration/reliability/h100-llama3-meta.yaml";

// The terminal summary of a run: the figures, how auto settings were chosen, the simulation's size and the
// files written (exactly those, so an out-of-memory run never claims a breakdown it did not write).
void print_run_summary(const report::RunResult& r, double wall, const std::string& out,
                       const std::vector<std::string>& written) {
  fmt::print("{}", report::human_summary(r));
  if (!r.search_log.empty() && r.ok())
    fmt::print("  settings     chose the fastest of {} candidate settings (see result.json)\n",
               r.search_log.size());
  else if (!r.search_log.empty())
    fmt::print("  settings     none of the {} candidate settings fits (see result.json)\n",
               r.search_log.size());
  if (r.ok())
    fmt::print(
        "  simulated    {} tasks, {} network phases ({} through SimGrid, the rest alone on their "
        "links in closed form) "
        "in {:.2f} s of wall time\n",
        r.plan.graph.tasks.size(),
        r.replay.closed_form_phases + r.replay.simgrid_activities - r.replay.handed_over_phases,
        r.replay.simgrid_activities, wall);
  if (!written.empty()) {  // exactly the files this run wrote
    std::string list;
    for (size_t i = 0; i < written.size(); ++i) list += (i ? ", " : "") + written[i];
    fmt::print("  wrote        {}/{}\n", out, list);
  }
}

// podsim run --job ...: several jobs on one cluster (driver/shared_fabric.hpp).
template <class Options>
void run_shared_fabric(const Options& opt, bool goodput) {
  if (opt.jobs.empty()) throw InputError("--job-nodes needs --job: it places several jobs on one cluster");
  if (goodput) throw InputError("--goodput estimates one job; it cannot be combined with --job");
  if (!opt.trace.empty())
    throw InputError("--trace records one job's step; it cannot be combined with --job yet");
  driver::SharedFabricRequest req;
  req.topology_file = opt.request.topology_file;
  std::vector<std::string> job1_sets;
  for (const auto& s : opt.request.sets)
    (s.rfind("topology.", 0) == 0 ? req.topology_sets : job1_sets).push_back(s);
  req.jobs.push_back({opt.request.workload_file, job1_sets, {}});
  for (const auto& spec : opt.jobs) {  // "FILE [key=value ...]": the job's own workload settings
    std::istringstream words(spec);
    driver::JobRequest job;
    words >> job.workload_file;
    for (std::string kv; words >> kv;)
      job.sets.push_back(kv.rfind("workload.", 0) == 0 ? kv : "workload." + kv);
    if (job.workload_file.empty())
      throw InputError("--job: expected a workload file, e.g. --job workloads/llama3-8b.yaml");
    req.jobs.push_back(std::move(job));
  }
  if (!opt.job_nodes.empty()) {
    if (opt.job_nodes.size() != req.jobs.size())
      throw InputError(
          fmt::format("--job-nodes: {} lists for {} jobs (--workload and each --job); give one per job",
                      opt.job_nodes.size(), req.jobs.size()));
    req.placement = driver::Placement::explicit_;
    for (size_t j = 0; j < req.jobs.size(); ++j)
      req.jobs[j].nodes = driver::parse_node_list(opt.job_nodes[j], "--job-nodes");
  } else {
    req.placement = driver::placement_from_string(opt.placement);
  }
  if (!opt.out.empty()) report::prepare_output_directory(opt.out, "--out");
  bool tty = ::isatty(2) && !opt.quiet;
  auto progress = [tty](const std::string& msg) {
    if (tty) fmt::print(stderr, "\r\033[K{}", msg);
  };
  auto r = driver::simulate_shared_fabric(req, progress);
  if (tty) fmt::print(stderr, "\r\033[K");
  r.placement = opt.job_nodes.empty() ? opt.placement : "explicit";
  if (!opt.out.empty())
    report::atomic_write((std::filesystem::path(opt.out) / "jobs.csv").string(),
                         report::shared_fabric_csv(r));
  if (opt.quiet) return;
  fmt::print("{}", report::shared_fabric_summary(r));
  if (!opt.out.empty()) fmt::print("  wrote        {}/jobs.csv\n", opt.out);
}

}  // namespace

void add_run_command(CLI::App& app) {
  struct Options {
    driver::RunRequest request;
    driver::JobSources imports;  // --hf-config, --megatron-args
    std::string out, trace, goodput;
    std::vector<std::string> jobs, job_nodes;
    std::string placement = "packed";
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand("run", "Simulate one training step of a workload on a topology");
  run->add_option("--topology,-t", opt->request.topology_file, "Topology YAML (topologies/*.yaml)")
      ->required();
  run->add_option("--workload,-w", opt->request.workload_file,
                  "Workload YAML (workloads/*.yaml); optional with --hf-config / --megatron-args");
  run->add_option("--set,-s", opt->request.sets,
                  "Override any YAML key by its dotted path, prefixed topology. or workload.\n"
                  "e.g. --set workload.parallel.pp=16 --set topology.nodes=128 (repeatable)");
  run->add_option("--out,-o", opt->out, "Directory for summary.csv, breakdown.csv and result.json");
  run->add_option("--trace", opt->trace,
                  "Write the simulated timeline of the step to this file in Chrome/Perfetto trace format\n"
                  "(open in ui.perfetto.dev or chrome://tracing; large runs give large files)");
  run->add_option(
         "--goodput", opt->goodput,
         "Also estimate goodput: the fraction of wall time on useful steps under the failure rates,\n"
         "checkpoint and restart costs of FILE (default calibration/reliability/h100-llama3-meta.yaml),\n"
         "and the expected time to train; --set goodput.<key>=<value> overrides FILE's keys,\n"
         "e.g. --set goodput.restart_minutes=5 --set goodput.train_tokens=15e12")
      ->expected(0, 1)
      ->default_str(kDefaultReliabilityProfile);
  run->add_option(
      "--job", opt->jobs,
      "Another job on the same cluster (repeatable): 'FILE [key=value ...]', a workload YAML and\n"
      "its own settings, e.g. --job 'workloads/llama3-8b.yaml parallel.dp=16'. Every job is placed\n"
      "on its own servers, simulated alone and then together with the others, and each job's\n"
      "slowdown from sharing the fabric is printed (and written to jobs.csv). --workload is job 1\n"
      "and --set workload.* applies to it only");
  run->add_option(
      "--placement", opt->placement,
      "With --job: packed (job after job on consecutive servers, the default) or spread (servers\n"
      "dealt round robin)");
  run->add_option(
      "--job-nodes", opt->job_nodes,
      "With --job: explicit servers per job, in job order, e.g. --job-nodes 0-15 --job-nodes 16-23");
  add_job_import_options(*run, opt->imports);
  run->add_flag("--links", opt->request.links,
                "Also write links.csv to --out: bytes, capacity, busy time at line rate and utilization per\n"
                "link class and for the hottest links (routes every flow of the step once)");
  run->add_flag("--quiet,-q", opt->quiet, "Print nothing but errors");
  run->footer(
      "Prints step time, TFLOP/s per device, MFU, memory per device and where the time went\n"
      "(compute, exposed tensor/pipeline/data-parallel communication, optimizer, pipeline bubble).\n"
      "With micro_batch: auto or virtual_stages: auto in the workload, every setting that fits in memory\n"
      "is simulated and the fastest is reported. A configuration that does not fit in device memory is\n"
      "reported with status out_of_memory.\n"
      "Exit status: 0 on success, 2 on bad input (the message names the file, line and field).");
  run->callback([opt, run] {
    apply_job_import(opt->imports, opt->request.workload_file, opt->request.sets, opt->quiet);
    if (!opt->jobs.empty() || !opt->job_nodes.empty())
      return run_shared_fabric(*opt, run->count("--goodput") > 0);
    // --goodput: its profile and --set goodput.* are read before the simulation, so that a bad key is
    // reported at once rather than after a long run.
    std::optional<reliability::ReliabilityProfile> reliability;
    Overrides goodput_sets = driver::take_goodput_sets(opt->request.sets);
    if (run->count("--goodput") > 0) {
      std::string file = opt->goodput.empty() ? kDefaultReliabilityProfile : opt->goodput;
      reliability = reliability::load_reliability_profile(find_project_file(file), goodput_sets);
    } else if (!goodput_sets.empty()) {
      throw InputError(fmt::format("--set goodput.{}: goodput keys need --goodput", goodput_sets[0].first));
    }
    // Before the simulation, so that a long run is not lost to a path it cannot write at the end.
    if (opt->request.links && opt->out.empty())
      throw InputError("--links writes links.csv into the --out directory: give --out DIR too");
    if (!opt->out.empty()) report::prepare_output_directory(opt->out, "--out");
    if (!opt->trace.empty()) report::prepare_output_file(opt->trace, "--trace");
    opt->request.trace = !opt->trace.empty();  // the trace draws link utilization per class
    bool tty = ::isatty(2) && !opt->quiet;
    auto started = std::chrono::steady_clock::now();
    auto progress = [tty](const std::string& msg) {
      if (tty) fmt::print(stderr, "\r\033[K{}", msg);
    };
    report::RunResult r = driver::simulate(opt->request, progress);
    if (tty) fmt::print(stderr, "\r\033[K");
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::optional<reliability::GoodputAssessment> goodput;
    if (reliability && r.ok()) goodput = driver::assess_goodput(opt->request, r, *reliability);
    std::vector<std::string> written;
    if (!opt->out.empty()) {
      written = report::write_run_outputs(r, opt->out);
      if (goodput) {
        report::atomic_write((std::filesystem::path(opt->out) / "goodput.csv").string(),
                             report::goodput_csv(*goodput));
        report::atomic_write((std::filesystem::path(opt->out) / "goodput_components.csv").string(),
                             report::goodput_components_csv(*goodput));
        written.push_back("goodput.csv");
        written.push_back("goodput_components.csv");
      }
      if (r.links) {
        report::atomic_write((std::filesystem::path(opt->out) / "links.csv").string(),
                             report::links_csv(*r.links));
        written.push_back("links.csv");
      }
      report::atomic_write((std::filesystem::path(opt->out) / "report.html").string(),
                           report::run_report_html(r));
      written.push_back("report.html");
    }
    bool traced = !opt->trace.empty() && r.ok();
    if (traced) report::atomic_write(opt->trace, report::chrome_trace(r));
    // A run that did not simulate has no timeline: the summary and files above still say why, then the
    // --trace the user asked for is an error.
    auto untraceable = [&] {
      if (!opt->trace.empty() && !traced)
        throw InputError(
            fmt::format("--trace {}: nothing to trace, the run's status is {}", opt->trace, r.status));
    };
    if (opt->quiet) return untraceable();
    print_run_summary(r, wall, opt->out, written);
    if (goodput) fmt::print("{}", report::goodput_summary(*goodput));
    if (traced) fmt::print("  trace        {}\n", opt->trace);
    std::fflush(stdout);
    untraceable();
  });
}

}  // namespace podsim::cli
