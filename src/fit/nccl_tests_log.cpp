#include "podsim/fit/nccl_tests_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "podsim/core/csv_table.hpp"
#include "podsim/core/error.hpp"
#include "podsim/core/text_input.hpp"

namespace podsim::calibration {
namespace {

std::vector<std::string> tokens(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool is_unsigned_integer(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Where the columns the importer needs are in a result header.
struct Columns {
  int size = -1, time = -1, busbw = -1;
  size_t count = 0;  // tokens a row must have at least
};

// "size count type redop root time algbw busbw #wrong time algbw busbw #wrong" (names as in the header,
// without the leading '#'); the first time/busbw pair is out-of-place.
bool header_columns(const std::vector<std::string>& t, Columns& c) {
  if (t.empty() || t[0] != "size") return false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (c.time < 0 && (t[i] == "time" || t[i] == "cputime")) c.time = static_cast<int>(i);
    if (c.time >= 0 && c.busbw < 0 && t[i] == "busbw") c.busbw = static_cast<int>(i);
  }
  c.size = 0;
  if (c.time < 0 || c.busbw < 0) return false;
  c.count = static_cast<size_t>(std::max(c.time, c.busbw)) + 1;
  return true;
}

double number_at(const std::vector<std::string>& t, int index, const std::string& what,
                 const std::string& name, int lineno) {
  const std::string& s = t.at(index);
  std::optional<double> v = parse_finite_number(s);
  if (!v || *v < 0)
    throw InputError(
        fmt::format("{}:{}: the {} column must be a non-negative number, got '{}'", name, lineno, what, s));
  return *v;
}

std::string collective_from_file_name(const std::string& name) {
  std::string base = std::filesystem::path(name).filename().string();
  std::transform(base.begin(), base.end(), base.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* key : {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
                          "reducescatter", "alltoall", "all_to_all", "sendrecv", "send_recv", "broadcast"})
    if (base.find(key) != std::string::npos) return to_podsim_collective(key);
  return "";
}

std::string nccl_version_from_code(const std::string& code) {
  // NCCL_VERSION_CODE is major*10000 + minor*100 + patch since NCCL 2.9: five or six digits. Anything
  // longer is no such code (and would overflow a long): kept as written.
  if (!is_unsigned_integer(code) || code.size() < 5 || code.size() > 9) return code;
  long v = std::stol(code);
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

// --op given on the command line, checked once up front so that a typo fails before any log is read.
std::string op_from_override(const std::string& op_override) {
  std::string op = op_override.empty() ? "" : to_podsim_collective(op_override);
  if (!op_override.empty() && op.empty())
    throw InputError(
        fmt::format("--op {}: not a collective podsim models (valid: all_reduce, all_gather, "
                    "reduce_scatter, alltoall, sendrecv, broadcast)",
                    op_override));
  return op;
}

// Reads a log line by line. A log may hold several result tables (one per test program or run); the
// preamble lines before a table (version, "Collective test starting", Rank lines, settings) describe it,
// so they are kept as state until its header line opens a new NcclTestsLog.
class NcclTestsLogParser {
 public:
  NcclTestsLogParser(const std::string& name, std::string op) : name_(name), op_(std::move(op)) {}

  void line(int lineno, const std::string& line) {
    if (preamble_line(lineno, line)) return;
    if (!line.empty() && line[0] == '#') {
      comment_line(lineno, line);
      return;
    }
    auto t = tokens(line);
    if (t.empty() || !in_table_) return;
    if (!is_unsigned_integer(t[0])) return;  // other programs' output mixed into the log
    result_row(lineno, t);
  }

  std::vector<NcclTestsLog> finish() {
    if (logs_.empty())
      throw InputError(fmt::format(
          "{}: no nccl-tests result table (expected a header line '#  size  count  type  redop  root  time  "
          "algbw  busbw ...' followed by result rows)",
          name_));
    for (const auto& log : logs_)
      if (log.rows.empty())
        throw InputError(fmt::format("{}:{}: the result table has no rows (did the test fail or stop early?)",
                                     name_, log.first_line));
    return std::move(logs_);
  }

 private:
  // Version, NCCL INFO/WARN, "Collective test starting" and Rank lines; true when the line is done with.
  bool preamble_line(int lineno, const std::string& line) {
    static const std::regex rank_line(
        R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*?)\s*$)");
    static const std::regex tests_version(
        R"(nccl-tests version\s+(\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?)");
    static const std::regex nccl_version(R"(NCCL version\s+(\S+))");
    static const std::regex starting(R"(^#\s*Collective test starting:\s*(\S+))");
    std::smatch m;
    if (std::regex_search(line, m, tests_version)) {
      version_ = "nccl-tests " + m[1].str();
      if (m[3].matched) version_ += ", NCCL " + nccl_version_from_code(m[3].str());
    } else if (line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos) {
      if (std::regex_search(line, m, nccl_version) && version_.find("NCCL") == std::string::npos)
        version_ += (version_.empty() ? "NCCL " : ", NCCL ") + m[1].str();
      return true;
    }
    if (std::regex_search(line, m, starting)) {
      program_ = m[1].str();
      in_table_ = false;
      return true;
    }
    if (std::regex_match(line, m, rank_line)) {
      // nccl-tests numbers ranks from 0; a rank beyond int is a damaged log, not a bug (found by fuzzing).
      if (m[1].length() > 9)
        throw InputError(
            fmt::format("{}:{}: rank {} is out of range for a Rank line", name_, lineno, m[1].str()));
      rank_hosts_.emplace_back(std::stoi(m[1].str()), m[2].str());
      device_ = m[3].str();
      in_table_ = false;
      return true;
    }
    return false;
  }

  // Other '#' lines: the settings line, or a result table's column header, which starts a new log.
  void comment_line(int lineno, const std::string& line) {
    auto t = tokens(line.substr(1));
    if (!t.empty() && t[0] == "nThread") settings_ = line.substr(1);
    Columns c;
    if (!header_columns(t, c)) return;
    cols_ = c;
    logs_.emplace_back();
    current_ = &logs_.back();
    current_->file = name_;
    current_->first_line = lineno;
    current_->program = program_;
    current_->version = version_;
    current_->settings = settings_;
    current_->op = !op_.empty()        ? op_
                   : !program_.empty() ? to_podsim_collective(program_)
                                       : collective_from_file_name(name_);
    if (current_->op.empty())
      throw InputError(
          fmt::format("{}:{}: cannot tell which collective this table measured ({}); name the file after the "
                      "nccl-tests program (e.g. all_reduce_perf.log) or pass --op all_reduce|all_gather|"
                      "reduce_scatter|alltoall|sendrecv|broadcast",
                      name_, lineno,
                      program_.empty() ? "no '# Collective test starting' line"
                                       : fmt::format("'{}' is not a collective podsim models", program_)));
    finish_ranks(*current_, lineno);
    program_.clear();
    in_table_ = true;
  }

  // The ranks, hosts and device of a new table from the Rank lines before it. nccl-tests prints them once
  // per run, so a later table of the same run without its own Rank lines takes the previous table's.
  void finish_ranks(NcclTestsLog& log, int lineno) {
    if (rank_hosts_.empty() && !logs_.empty() && &log != &logs_.front()) {
      const NcclTestsLog& prev = logs_[logs_.size() - 2];
      log.ranks = prev.ranks, log.nodes = prev.nodes, log.hosts = prev.hosts, log.device = prev.device;
      return;
    }
    if (rank_hosts_.empty())
      throw InputError(fmt::format(
          "{}:{}: no '#  Rank N Group G Pid P on HOST device D [...] GPU' lines before the result table: the "
          "log must show which GPUs took part (nccl-tests prints them; keep the whole output)",
          name_, lineno));
    std::set<int> ranks;
    for (const auto& [rank, host] : rank_hosts_) {
      ranks.insert(rank);
      if (std::find(log.hosts.begin(), log.hosts.end(), host) == log.hosts.end()) log.hosts.push_back(host);
    }
    log.ranks = static_cast<int>(ranks.size());
    log.nodes = static_cast<int>(log.hosts.size());
    log.device = device_;
    rank_hosts_.clear();
  }

  // One result row of the current table: out-of-place size, time and busbw, sizes strictly growing.
  void result_row(int lineno, const std::vector<std::string>& t) {
    if (t.size() < cols_.count)
      throw InputError(fmt::format(
          "{}:{}: result row has {} fields but the header at line {} needs at least {} (size ... time algbw "
          "busbw): truncated line?",
          name_, lineno, t.size(), current_->first_line, cols_.count));
    NcclTestsRow row;
    row.line = lineno;
    row.bytes = number_at(t, cols_.size, "size (B)", name_, lineno);
    row.seconds = number_at(t, cols_.time, "out-of-place time (us)", name_, lineno) * 1e-6;
    row.busbw = number_at(t, cols_.busbw, "out-of-place busbw (GB/s)", name_, lineno) * 1e9;
    if (row.bytes <= 0 || row.seconds <= 0)
      throw InputError(fmt::format("{}:{}: size and time must be more than 0 (got {} B, {} us)", name_,
                                   lineno, row.bytes, row.seconds * 1e6));
    if (!current_->rows.empty() && row.bytes <= current_->rows.back().bytes)
      throw InputError(fmt::format(
          "{}:{}: size {} B does not increase (line {} had {} B): sizes must grow within one test; if two "
          "runs were pasted together, keep each with its own column header",
          name_, lineno, row.bytes, current_->rows.back().line, current_->rows.back().bytes));
    current_->rows.push_back(row);
  }

  const std::string& name_;
  const std::string op_;  // from --op; "" = from the log or its file name
  std::vector<NcclTestsLog> logs_;
  std::vector<std::pair<int, std::string>> rank_hosts_;  // Rank lines since the last table
  std::string device_, program_, version_, settings_;
  NcclTestsLog* current_ = nullptr;  // into logs_: only emplace_back moves it, and that resets it
  Columns cols_;
  bool in_table_ = false;
};

// Job launchers' output prefixes: `srun -l` ("0: ", the task number, padded) and `mpirun --tag-output`
// ("[1,0]<stdout>:", job and rank). Only rank 0 of an MPI nccl-tests prints the results (the Rank lines are
// gathered to it), so the lines of the lowest tagged task are kept and the other tasks' lines (NCCL INFO,
// or whole tables of independent non-MPI runs) dropped.
struct Tagged {
  int task = -1;  // -1: the line has no prefix
  std::string text;
};

Tagged strip_launcher_prefix(const std::string& line) {
  static const std::regex srun(R"(^\s*(\d{1,6}): ?)");
  static const std::regex mpirun(R"(^\[\d+,(\d{1,6})\]<std(?:out|err)>: ?)");
  std::smatch m;
  if (std::regex_search(line, m, mpirun) || std::regex_search(line, m, srun))
    return {std::stoi(m[1].str()), line.substr(static_cast<size_t>(m[0].length()))};
  return {-1, line};
}

}  // namespace

std::string to_podsim_collective(const std::string& raw) {
  std::string name = raw;
  if (name.size() > 5 && name.substr(name.size() - 5) == "_perf") name.resize(name.size() - 5);
  if (name == "all_reduce" || name == "allreduce") return "all_reduce";
  if (name == "all_gather" || name == "allgather") return "all_gather";
  if (name == "reduce_scatter" || name == "reducescatter") return "reduce_scatter";
  if (name == "alltoall" || name == "all_to_all") return "all_to_all";
  if (name == "sendrecv" || name == "send_recv") return "send_recv";
  if (name == "broadcast") return "broadcast";
  return "";
}

std::vector<NcclTestsLog> parse_nccl_tests_log(const std::string& text, const std::string& name,
                                               const std::string& op_override) {
  NcclTestsLogParser parser(name, op_from_override(op_override));
  auto lines = numbered_lines(text);
  std::vector<Tagged> tagged;
  int first_task = -1;
  for (const auto& [lineno, line] : lines) {
    tagged.push_back(strip_launcher_prefix(line));
    if (tagged.back().task >= 0 && (first_task < 0 || tagged.back().task < first_task))
      first_task = tagged.back().task;
  }
  for (size_t i = 0; i < lines.size(); ++i)
    if (tagged[i].task < 0 || tagged[i].task == first_task) parser.line(lines[i].number, tagged[i].text);
  return parser.finish();
}

bool is_calib_nccl_csv(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    return line.rfind("op,ranks,nodes,bytes", 0) == 0;
  }
  return false;
}

std::vector<NcclTestsLog> parse_calib_nccl_csv(const std::string& text, const std::string& name) {
  CsvTable t = parse_csv(text, name);
  for (const char* c : {"op", "ranks", "nodes", "bytes", "median_time_us"})
    if (!t.has_column(c))
      throw InputError(
          fmt::format("{}: missing column '{}' (calib-nccl writes: op, ranks, nodes, bytes, "
                      "median_time_us, algbw_GBps, busbw_GBps, iterations)",
                      name, c));
  std::map<std::string, std::string> header;
  for (const auto& c : t.comments) {
    auto colon = c.find(':');
    if (colon == std::string::npos) continue;
    auto trim = [](std::string v) {
      size_t a = v.find_first_not_of(' '), b = v.find_last_not_of(' ');
      return a == std::string::npos ? std::string() : v.substr(a, b - a + 1);
    };
    header[trim(c.substr(0, colon))] = trim(c.substr(colon + 1));
  }
  std::vector<NcclTestsLog> logs;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    std::string op = to_podsim_collective(t.text(i, "op"));
    if (op.empty())
      throw InputError(fmt::format("{}:{}: unknown collective '{}' in column 'op'", name, t.row_lines[i],
                                   t.text(i, "op")));
    int ranks = static_cast<int>(t.number(i, "ranks")), nodes = static_cast<int>(t.number(i, "nodes"));
    if (logs.empty() || logs.back().op != op || logs.back().ranks != ranks || logs.back().nodes != nodes) {
      NcclTestsLog log;
      log.file = name;
      log.first_line = t.row_lines[i];
      log.op = op;
      log.program = "calib-nccl " + op;
      log.ranks = ranks;
      log.nodes = nodes;
      std::istringstream hosts(header["hosts"]);
      for (std::string h; hosts >> h;) log.hosts.push_back(h);
      log.device = header["device"];
      log.version = header.count("nccl") ? "NCCL " + header["nccl"] : "";
      logs.push_back(std::move(log));
    }
    NcclTestsRow row;
    row.line = t.row_lines[i];
    row.bytes = t.number(i, "bytes");
    row.seconds = t.number(i, "median_time_us") * 1e-6;
    if (row.bytes <= 0 || row.seconds <= 0 || ranks < 1 || nodes < 1)
      throw InputError(
          fmt::format("{}:{}: ranks, nodes, bytes and median_time_us must be more than 0", name, row.line));
    auto& rows = logs.back().rows;
    if (!rows.empty() && row.bytes <= rows.back().bytes)
      throw InputError(
          fmt::format("{}:{}: bytes {} does not increase (line {} had {}) within {} over {} ranks", name,
                      row.line, row.bytes, rows.back().line, rows.back().bytes, op, ranks));
    rows.push_back(row);
  }
  if (logs.empty()) throw InputError(fmt::format("{}: no measurements after the header", name));
  return logs;
}

std::vector<NcclTestsLog> read_nccl_tests_log(const std::string& path, const std::string& op) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  if (is_calib_nccl_csv(ss.str())) return parse_calib_nccl_csv(ss.str(), path);
  if (is_nccl_tests_json(ss.str())) return parse_nccl_tests_json(ss.str(), path, op);
  return parse_nccl_tests_log(ss.str(), path, op);
}

}  // namespace podsim::calibration
