// Reading an enum from YAML through its names table (core/names.hpp): the accepted words and the list an
// error shows are the table's, or a subset where a reader accepts only some values.
#pragma once

#include <initializer_list>
#include <string_view>

#include "podsim/core/config_node.hpp"
#include "podsim/core/names.hpp"

namespace podsim {

template <class E, std::size_t N>
E choice_or(const ConfigNode& node, std::string_view key, const NameTable<E, N>& table, E fallback) {
  return *table.parse(node.choice_or(key, table.names(), table.name(fallback)));
}

template <class E, std::size_t N>
E choice_or(const ConfigNode& node, std::string_view key, const NameTable<E, N>& table,
            std::initializer_list<E> accepted, E fallback) {
  return *table.parse(node.choice_or(key, table.names(accepted), table.name(fallback)));
}

}  // namespace podsim
