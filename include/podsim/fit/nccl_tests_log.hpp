// Reading the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf, broadcast_perf): the format people already have from their clusters.
//
// What is read: the "# Collective test starting: NAME" line (2.14+; otherwise the file name or an
// explicit op names the collective), the "#  Rank N Group G Pid P on HOST device D [bus] NAME" lines
// (ranks, servers, GPU model), the column header ("# size count type redop root time algbw busbw
// #wrong ..."), and the result rows, of which the out-of-place time is used. NCCL's own log lines
// (NCCL INFO/WARN) are skipped. Several tests in one file (one after another) become several logs.
#pragma once

#include <string>
#include <vector>

namespace podsim::calibration {

struct NcclTestsRow {
  double bytes = 0;    // nccl-tests "size" column
  double seconds = 0;  // out-of-place time
  double busbw = 0;    // out-of-place busbw as printed, bytes/s (for the report; fits use time)
  int line = 0;
};

struct NcclTestsLog {
  std::string file;
  int first_line = 0;   // line of the test's column header
  std::string op;       // podsim collective name: all_reduce, all_gather, ... (see to_podsim_collective)
  std::string program;  // nccl-tests binary if the log names it, e.g. all_reduce_perf
  int ranks = 0;        // from the Rank lines
  int nodes = 0;        // distinct hosts among the Rank lines
  std::vector<std::string> hosts;
  std::string device;    // GPU model printed on the Rank lines
  std::string version;   // "nccl-tests 2.13.9, NCCL 2.18.3" as far as the log says
  std::string settings;  // the "# nThread ... iters ..." line
  std::vector<NcclTestsRow> rows;
};

// Maps an nccl-tests program or op name (all_reduce_perf, alltoall, sendrecv, ...) to podsim's
// collective name; returns "" when podsim does not model it (reduce, gather, scatter, hypercube).
std::string to_podsim_collective(const std::string& name);

// calib-nccl's CSV (calibration/src/calib_nccl.cu: op,ranks,nodes,bytes,median_time_us,...) is read too;
// read_nccl_tests_log tells the two apart by the first line that is not a comment.
bool is_calib_nccl_csv(const std::string& text);
std::vector<NcclTestsLog> parse_calib_nccl_csv(const std::string& text, const std::string& name);

// nccl-tests' JSON output (-J FILE.json, nccl-tests 2.17+): one test per file (nccl_tests_json.cpp);
// rows' `line` is the index in "results" + 1. read_nccl_tests_log tells it apart by a leading '{'.
bool is_nccl_tests_json(const std::string& text);
std::vector<NcclTestsLog> parse_nccl_tests_json(const std::string& text, const std::string& name,
                                                const std::string& op = "");

// Lines prefixed by `srun -l` ("0: ") or `mpirun --tag-output` ("[1,0]<stdout>:") are read without the
// prefix, keeping the lowest task's lines. Throws InputError naming file and line: unreadable file, no result
// table, a truncated or malformed row, sizes that do not increase within one test, an unknown collective.
// `op` overrides the collective
// ("" = from the log or the file name).
std::vector<NcclTestsLog> read_nccl_tests_log(const std::string& path, const std::string& op = "");
std::vector<NcclTestsLog> parse_nccl_tests_log(const std::string& text, const std::string& name,
                                               const std::string& op = "");

}  // namespace podsim::calibration
