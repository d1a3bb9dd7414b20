// A minimal binary writer/reader for passing plain data between processes of the same build (the
// replay's forked child and its parent). Values are copied bit for bit, so doubles come back exactly;
// the reader checks every size against what is left and throws instead of reading past the end.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace podsim {

class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof value);
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    append(s.data(), s.size());
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<std::uint64_t>(v.size());
    append(v.data(), v.size() * sizeof(T));
  }
  std::string take() { return std::move(bytes_); }

 private:
  void append(const void* data, size_t size) { bytes_.append(static_cast<const char*>(data), size); }
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    copy(&value, sizeof value);
    return value;
  }
  std::string get_string() {
    std::string s(count(1), '\0');
    copy(s.data(), s.size());
    return s;
  }
  template <class T>
  std::vector<T> get_vector() {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> v(count(sizeof(T)));
    copy(v.data(), v.size() * sizeof(T));
    return v;
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  // An element count that the remaining bytes can actually hold.
  size_t count(size_t element_size) {
    auto n = get<std::uint64_t>();
    if (n > (bytes_.size() - pos_) / element_size) throw std::runtime_error("truncated binary message");
    return static_cast<size_t>(n);
  }
  void copy(void* out, size_t size) {
    if (size > bytes_.size() - pos_) throw std::runtime_error("truncated binary message");
    std::memcpy(out, bytes_.data() + pos_, size);
    pos_ += size;
  }
  const std::string& bytes_;
  size_t pos_ = 0;
};

}  // namespace podsim
