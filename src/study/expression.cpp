#include "podsim/study/expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace podsim::study {

struct Expression::Node {
  enum Kind { number, text, name, unary, binary } kind;
  std::string op;  // for unary/binary
  double value = 0;
  std::string str;
  std::shared_ptr<const Node> a, b;
  int depth = 1;  // of the tree below: evaluating and destroying it recurse that deep
};

namespace {

using NodePtr = std::shared_ptr<const Expression::Node>;

// Parsing, evaluating and freeing recurse once per level: a limit keeps a hostile filter ("((((...", 10000
// 'not's, a sum of 10000 terms) from overflowing the stack. Real filters are a few levels deep.
constexpr int kMaxDepth = 100;

struct Value {
  bool is_number = true;
  double number = 0;
  std::string text;
};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  NodePtr parse() {
    NodePtr n = parse_or();
    skip();
    if (pos_ != s_.size()) fail("unexpected text");
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string shown = s_.size() > 80 ? s_.substr(0, 77) + "..." : s_;
    throw std::invalid_argument(fmt::format("{} at column {} of '{}'", what, pos_ + 1, shown));
  }
  // Counts one level of recursion for as long as it lives.
  class Level {
   public:
    explicit Level(Parser& p) : p_(p) {
      if (++p_.level_ > kMaxDepth) p_.fail(fmt::format("nested more than {} levels deep", kMaxDepth));
    }
    ~Level() { --p_.level_; }

   private:
    Parser& p_;
  };
  NodePtr unary(std::string op, NodePtr a) {
    auto n = std::make_shared<Expression::Node>();
    n->kind = Expression::Node::unary;
    n->op = std::move(op);
    n->depth = a->depth + 1;
    n->a = std::move(a);
    return n;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool word(const char* w) {
    skip();
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    if (pos_ + n < s_.size() &&
        (std::isalnum(static_cast<unsigned char>(s_[pos_ + n])) || s_[pos_ + n] == '_'))
      return false;
    pos_ += n;
    return true;
  }
  bool symbol(const char* sym) {
    skip();
    size_t n = std::char_traits<char>::length(sym);
    if (s_.compare(pos_, n, sym) != 0) return false;
    pos_ += n;
    return true;
  }
  NodePtr binary(std::string op, NodePtr a, NodePtr b) {
    auto n = std::make_shared<Expression::Node>();
    n->kind = Expression::Node::binary;
    n->op = std::move(op);
    n->depth = std::max(a->depth, b->depth) + 1;
    if (n->depth > kMaxDepth)
      fail(fmt::format("more than {} operators in a chain; split the filter in several", kMaxDepth));
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  NodePtr parse_or() {
    Level level(*this);
    NodePtr n = parse_and();
    while (word("or")) n = binary("or", n, parse_and());
    return n;
  }
  NodePtr parse_and() {
    NodePtr n = parse_not();
    while (word("and")) n = binary("and", n, parse_not());
    return n;
  }
  NodePtr parse_not() {
    if (word("not")) {
      Level level(*this);
      return unary("not", parse_not());
    }
    return parse_comparison();
  }
  NodePtr parse_comparison() {
    NodePtr n = parse_sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"})
      if (symbol(op)) return binary(op, n, parse_sum());
    return n;
  }
  NodePtr parse_sum() {
    NodePtr n = parse_product();
    for (;;) {
      if (symbol("+"))
        n = binary("+", n, parse_product());
      else if (symbol("-"))
        n = binary("-", n, parse_product());
      else
        return n;
    }
  }
  NodePtr parse_product() {
    NodePtr n = parse_atom();
    for (;;) {
      if (symbol("*"))
        n = binary("*", n, parse_atom());
      else if (symbol("/"))
        n = binary("/", n, parse_atom());
      else if (symbol("%"))
        n = binary("%", n, parse_atom());
      else
        return n;
    }
  }
  NodePtr parse_atom() {
    skip();
    if (pos_ >= s_.size()) fail("expression ends too early");
    auto n = std::make_shared<Expression::Node>();
    char c = s_[pos_];
    if (symbol("(")) {
      NodePtr inner = parse_or();
      if (!symbol(")")) fail("missing ')'");
      return inner;
    }
    if (symbol("-")) {
      Level level(*this);
      return unary("-", parse_atom());
    }
    if (c == '\'' || c == '"') {
      size_t end = s_.find(c, pos_ + 1);
      if (end == std::string::npos) fail("unterminated string");
      n->kind = Expression::Node::text;
      n->str = s_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      size_t used = 0;
      n->kind = Expression::Node::number;
      n->value = std::stod(s_.substr(pos_), &used);
      pos_ += used;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
        ++pos_;
      n->kind = Expression::Node::name;
      n->str = s_.substr(start, pos_ - start);
      if (n->str == "true" || n->str == "false") n->kind = Expression::Node::text;
      return n;
    }
    fail(fmt::format("unexpected '{}'", c));
  }

  const std::string& s_;
  size_t pos_ = 0;
  int level_ = 0;
};

Value as_value(const std::string& s) {
  Value v;
  size_t used = 0;
  try {
    v.number = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == s.size() && !s.empty()) return v;
  v.is_number = false;
  v.text = s;
  return v;
}

bool truthy(const Value& v) {
  return v.is_number ? v.number != 0 : !v.text.empty() && v.text != "false";
}

Value eval(const Expression::Node& n, const std::map<std::string, std::string>& values) {
  using K = Expression::Node;
  switch (n.kind) {
    case K::number: return Value{true, n.value, ""};
    case K::text: return as_value(n.str);
    case K::name: {
      auto it = values.find(n.str);
      if (it == values.end())
        throw std::invalid_argument(
            fmt::format("unknown name '{}' (names are the study's axis keys)", n.str));
      return as_value(it->second);
    }
    case K::unary: {
      Value a = eval(*n.a, values);
      if (n.op == "not") return Value{true, truthy(a) ? 0.0 : 1.0, ""};
      if (!a.is_number) throw std::invalid_argument("'-' needs a number");
      return Value{true, -a.number, ""};
    }
    case K::binary: {
      if (n.op == "and")
        return Value{true, truthy(eval(*n.a, values)) && truthy(eval(*n.b, values)) ? 1.0 : 0.0, ""};
      if (n.op == "or")
        return Value{true, truthy(eval(*n.a, values)) || truthy(eval(*n.b, values)) ? 1.0 : 0.0, ""};
      Value a = eval(*n.a, values), b = eval(*n.b, values);
      if (n.op == "==" || n.op == "!=") {
        bool eq = a.is_number && b.is_number ? a.number == b.number
                                             : (a.is_number ? fmt::format("{}", a.number) : a.text) ==
                                                   (b.is_number ? fmt::format("{}", b.number) : b.text);
        return Value{true, (n.op == "==") == eq ? 1.0 : 0.0, ""};
      }
      if (!a.is_number || !b.is_number) throw std::invalid_argument(fmt::format("'{}' needs numbers", n.op));
      double x = a.number, y = b.number, r = 0;
      if (n.op == "+")
        r = x + y;
      else if (n.op == "-")
        r = x - y;
      else if (n.op == "*")
        r = x * y;
      else if (n.op == "/")
        r = x / y;
      else if (n.op == "%")
        r = std::fmod(x, y);
      else if (n.op == "<")
        r = x < y;
      else if (n.op == "<=")
        r = x <= y;
      else if (n.op == ">")
        r = x > y;
      else if (n.op == ">=")
        r = x >= y;
      return Value{true, r, ""};
    }
  }
  return {};
}

}  // namespace

Expression Expression::parse(const std::string& text) {
  Expression e;
  e.text_ = text;
  e.root_ = Parser(e.text_).parse();
  return e;
}

bool Expression::evaluate(const std::map<std::string, std::string>& values) const {
  return truthy(eval(*root_, values));
}

}  // namespace podsim::study
