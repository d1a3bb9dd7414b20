// One table of names per enum: what to_string prints, what YAML and the command line accept, and the list
// of valid values an error message shows all come from it, so adding a value means adding one line.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace podsim {

template <class E>
struct Named {
  E value;
  const char* name;  // a literal: to_string hands it out as a C string
};

template <class E, std::size_t N>
struct NameTable {
  std::array<Named<E>, N> entries;

  // "?" for a value without a name (a sentinel such as `count`).
  constexpr const char* name(E value) const {
    for (const auto& e : entries)
      if (e.value == value) return e.name;
    return "?";
  }
  constexpr std::optional<E> parse(std::string_view text) const {
    for (const auto& e : entries)
      if (text == e.name) return e.value;
    return std::nullopt;
  }
  // Throws std::invalid_argument "unknown <what> '<text>' (valid: a, b, c)".
  E parse_or_throw(std::string_view text, std::string_view what) const {
    if (auto value = parse(text)) return *value;
    throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(text) +
                                "' (valid: " + valid_list() + ")");
  }
  // The names in table order, or those of `subset` in its order (where a reader accepts only some values).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries) out.emplace_back(e.name);
    return out;
  }
  std::vector<std::string> names(std::initializer_list<E> subset) const {
    std::vector<std::string> out;
    for (E value : subset) out.emplace_back(name(value));
    return out;
  }
  // "a, b, c": what error messages list as valid.
  std::string valid_list() const {
    std::string out;
    for (const auto& e : entries) {
      if (!out.empty()) out += ", ";
      out += e.name;
    }
    return out;
  }
};

// `inline constexpr auto kFooNames = name_table<Foo>({{Foo::a, "a"}, {Foo::b, "b"}});`
template <class E, std::size_t N>
constexpr NameTable<E, N> name_table(const Named<E> (&entries)[N]) {
  NameTable<E, N> table{};
  for (std::size_t i = 0; i < N; ++i) table.entries[i] = entries[i];
  return table;
}

}  // namespace podsim
