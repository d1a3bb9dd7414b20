// Filter expressions of study files, e.g.
//   workload.parallel.tp * workload.parallel.pp <= topology.nodes * 8 and workload.parallel.pp != 1
// Numbers, 'strings', dotted names (the point's values), + - * / %, comparisons, and / or / not, parentheses.
// A small hand-written parser: the grammar is tiny and a general expression library would be a heavier
// dependency than the 150 lines here.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace podsim::study {

class Expression {
 public:
  // Throws std::invalid_argument with the column of the problem.
  static Expression parse(const std::string& text);
  // Names resolve to the point's values (a value that reads as a number compares as a number). Throws
  // std::invalid_argument for unknown names.
  bool evaluate(const std::map<std::string, std::string>& values) const;
  const std::string& text() const { return text_; }

  struct Node;

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace podsim::study
