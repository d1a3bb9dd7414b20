// Parsing and checking parallel.pipeline_layout, Megatron-Core's pipeline_model_parallel_layout string
// (pipeline_layout.hpp). The grammar follows PipelineParallelLayerLayout.parse_str_to_list: commas dropped,
// `(group)*n` unrolled (one level: Megatron's regex does not nest), then `x*n`, then split at '|'.
#include "podsim/workload/transformer/pipeline_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace podsim::workload {
namespace {

constexpr size_t kMaxExpanded = 1 << 20;  // a typo like t*99999999 must fail, not allocate
constexpr const char* kGrammar =
    "a Megatron-Core pipeline_model_parallel_layout: E (embedding), t (transformer layer), m (MTP module), "
    "L (loss), '|' between model chunks, x*n or (group)*n to repeat, e.g. \"Et*4|(t*4|)*14tmL\"";

class Expander {
 public:
  Expander(const std::string& text, const ConfigNode& node, const std::string& key)
      : text_(text), node_(node), key_(key) {}

  std::string run() { return sequence(false); }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    node_.fail(key_, fmt::format("pipeline layout \"{}\": {}; expected {}", text_, why, kGrammar));
  }
  void check_symbol(char c, size_t at) const {
    if (std::string_view("EtmL|").find(c) != std::string_view::npos) return;
    std::string shown = std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : "a control byte";
    fail(fmt::format("'{}' at position {} is not a layer symbol (E, t, m, L or '|')", shown, at + 1));
  }
  // Symbols (each optionally *n) up to the end, or inside a group up to its ')'.
  std::string sequence(bool in_group) {
    std::string out;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ')') {
        if (in_group) return out;
        fail(fmt::format("')' at position {} closes no '('", pos_ + 1));
      }
      if (c == ',') {  // cosmetic, as in Megatron
        ++pos_;
      } else if (c == '(') {
        if (in_group) fail(fmt::format("'(' at position {} is nested; Megatron unrolls one level", pos_ + 1));
        std::string inside = group();  // before its count: argument order is unspecified
        append(out, inside, read_count());
      } else if (c == '*') {
        fail(fmt::format("'*' at position {} repeats nothing: write x*n or (group)*n", pos_ + 1));
      } else {
        check_symbol(c, pos_);
        ++pos_;
        append(out, std::string(1, c), has_count() ? read_count() : 1);
      }
    }
    return out;
  }
  std::string group() {
    size_t open = pos_++;
    std::string inside = sequence(true);
    if (pos_ == text_.size()) fail(fmt::format("'(' at position {} is never closed", open + 1));
    ++pos_;  // ')'
    if (inside.empty()) fail(fmt::format("the group at position {} is empty", open + 1));
    if (!has_count()) fail(fmt::format("the group at position {} needs a repeat count: (...)*n", open + 1));
    return inside;
  }
  bool has_count() const { return pos_ < text_.size() && text_[pos_] == '*'; }
  long long read_count() {
    size_t star = pos_++;
    size_t digits = pos_;
    long long n = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      n = std::min<long long>(n * 10 + (text_[pos_] - '0'), kMaxExpanded + 1);
      ++pos_;
    }
    if (pos_ == digits) fail(fmt::format("'*' at position {} needs a repeat count", star + 1));
    if (n < 1) fail(fmt::format("the repeat count at position {} must be at least 1", digits + 1));
    return n;
  }
  void append(std::string& out, const std::string& unit, long long n) const {
    if (out.size() + unit.size() * static_cast<double>(n) > kMaxExpanded)
      fail(fmt::format("it expands to more than {} symbols", kMaxExpanded));
    for (long long i = 0; i < n; ++i) out += unit;
  }

  const std::string& text_;
  const ConfigNode& node_;
  const std::string& key_;
  size_t pos_ = 0;
};

}  // namespace

PipelineLayout parse_pipeline_layout(const std::string& text, const ModelConfig& m, const ConfigNode& node,
                                     const std::string& key) {
  std::string flat = Expander(text, node, key).run();
  auto fail = [&](const std::string& why) {
    node.fail(key, fmt::format("pipeline layout \"{}\": {}", text, why));
  };
  auto count = [&](char c) { return std::count(flat.begin(), flat.end(), c); };
  if (count('E') != 1 || flat.front() != 'E')
    fail(fmt::format("it needs exactly one E (the embedding), as its first symbol; it has {}", count('E')));
  if (count('L') != 1 || flat.back() != 'L')
    fail(fmt::format("it needs exactly one L (the loss), as its last symbol; it has {}", count('L')));
  if (count('t') != m.layers)
    fail(fmt::format("it places {} transformer layers (t); model.layers is {}", count('t'), m.layers));
  if (count('m') != m.mtp_layers)
    fail(fmt::format("it places {} MTP modules (m); model.mtp_layers is {}", count('m'), m.mtp_layers));
  size_t last_chunk = flat.rfind('|') == std::string::npos ? 0 : flat.rfind('|') + 1;
  size_t first_m = flat.find('m');
  if (first_m != std::string::npos && (first_m < last_chunk || flat.find('t', first_m) != std::string::npos))
    fail(
        "podsim costs the MTP modules beside the loss: every m must be in the last chunk, after its "
        "transformer layers (Megatron's mtp_standalone layouts are not modelled)");
  PipelineLayout out{text, {0}};
  for (char c : flat) {
    if (c == '|') out.layers.push_back(0);
    if (c == 't') ++out.layers.back();
  }
  return out;
}

namespace {

// The chunk counts of the layouts given, for messages.
std::string chunk_counts(const ParallelConfig& p) {
  std::vector<size_t> n;
  for (const auto& l : p.pipeline_layouts) n.push_back(l.size());
  return fmt::format("{}", fmt::join(n, ", "));
}

// virtual_stages from the layouts: `auto` takes the one layout pp divides (Megatron derives the virtual
// pipeline size from the layout's length); an explicit value needs a layout of pp x virtual_stages chunks.
void resolve_virtual_stages(const ConfigNode& par, ParallelConfig& p) {
  // One stage of one chunk holds everything whatever a layout says (Megatron-Bridge's DeepSeek-V3 table
  // maps pp 1, vp 1 to no layout): the strings were checked, the even split applies.
  // The layouts stay on the config (podsim plan searches pp from a neutral pp 1 and needs them);
  // pipeline_split.cpp applies none at pp 1.
  if (p.pp == 1 && p.virtual_stages <= 1) return;
  bool interleaved = p.schedule == Schedule::interleaved;
  if (p.virtual_stages_auto) {
    std::vector<int> fits;
    for (const auto& l : p.pipeline_layouts)
      if (l.size() % p.pp == 0 && (interleaved || l.size() == static_cast<size_t>(p.pp)))
        fits.push_back(static_cast<int>(l.size() / p.pp));
    if (fits.size() != 1)
      par.fail("virtual_stages",
               fmt::format("virtual_stages: auto with pipeline_layout needs exactly one layout whose chunk "
                           "count pp={} divides; the layouts have {} chunks, {} of them fit: set "
                           "virtual_stages to choose",
                           p.pp, chunk_counts(p), fits.size()));
    p.virtual_stages = fits.front();
    p.virtual_stages_auto = false;
  }
  if (!layout_for(p, p.virtual_stages))
    par.fail("pipeline_layout",
             fmt::format("no layout has pp*virtual_stages = {}*{} = {} model chunks (the layouts have {}); "
                         "give one with that many '|'-separated chunks, or change pp / virtual_stages",
                         p.pp, p.virtual_stages, static_cast<long long>(p.pp) * p.virtual_stages,
                         chunk_counts(p)));
}

}  // namespace

void read_pipeline_layout(const ConfigNode& par, const ModelConfig& m, ParallelConfig& p) {
  if (!par.has("pipeline_layout")) {
    par.optional_child("pipeline_layout");  // marks an explicit null as read
    return;
  }
  // Each layout with the node and key its errors name: the list element, or the key itself.
  std::vector<std::pair<ConfigNode, std::string>> given;
  if (par.is_list("pipeline_layout")) {
    for (const auto& e : par.list("pipeline_layout")) given.emplace_back(e, "");
    if (given.empty()) par.fail("pipeline_layout", "an empty list: give a layout string, or omit the key");
  } else {
    par.string("pipeline_layout");  // text, not a number or a mapping
    given.emplace_back(par, "pipeline_layout");
  }
  for (const char* flag : {"embedding_in_pipeline_split", "loss_in_pipeline_split"})
    if (par.boolean_or(flag, false))
      par.fail(flag, fmt::format("pipeline_layout already places the embedding (E) and the loss (L); remove "
                                 "{} (Megatron-Core refuses account_for_*_in_pipeline_split with a layout)",
                                 flag));
  for (const auto& [node, key] : given) {
    std::string text = key.empty() ? node.as_string() : node.string(key);
    PipelineLayout l = parse_pipeline_layout(text, m, node, key);
    if (std::any_of(p.pipeline_layouts.begin(), p.pipeline_layouts.end(),
                    [&](const auto& o) { return o.size() == l.layers.size(); }))
      node.fail(key,
                fmt::format("two layouts have {} chunks: which applies would be ambiguous", l.layers.size()));
    p.pipeline_layouts.push_back(l.layers);
  }
  resolve_virtual_stages(par, p);
}

const std::vector<int>* layout_for(const ParallelConfig& p, int virtual_stages) {
  if (p.pp == 1 && virtual_stages <= 1) return nullptr;  // one chunk holds every layer
  size_t chunks = static_cast<size_t>(p.pp) * virtual_stages;
  for (const auto& l : p.pipeline_layouts)
    if (l.size() == chunks) return &l;
  return nullptr;
}

}  // namespace podsim::workload
