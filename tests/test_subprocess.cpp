// core/subprocess.hpp and core/byte_stream.hpp: what the engine uses to bring a replay back from its child.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <limits>

#include "podsim/core/byte_stream.hpp"
#include "podsim/core/subprocess.hpp"

using namespace podsim;

TEST(Subprocess, BringsBackTheBytesTheChildReturns) {
  std::string big(1 << 20, 'x');  // more than a pipe buffer
  ChildOutcome out = run_in_child([&] { return big + "end"; });
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.signal, 0);
  EXPECT_EQ(out.bytes, big + "end");
}

TEST(Subprocess, AChildThatDiesIsIncompleteAndNamesItsSignal) {
  ChildOutcome out = run_in_child([]() -> std::string {
    std::raise(SIGKILL);
    return "never";
  });
  EXPECT_FALSE(out.complete);
  EXPECT_EQ(out.signal, SIGKILL);
  EXPECT_TRUE(out.bytes.empty());
  out = run_in_child([]() -> std::string { throw 1; });
  EXPECT_FALSE(out.complete);
  EXPECT_EQ(out.signal, 0);
}

TEST(ByteStream, RoundTripsExactlyAndRefusesTruncation) {
  struct Pair {
    double a;
    long long b;
  };
  ByteWriter w;
  w.put(std::numeric_limits<double>::denorm_min());
  w.put_string("message");
  w.put_vector(std::vector<Pair>{{0.1, 1}, {1.0 / 3, -2}});
  std::string bytes = w.take();
  ByteReader r(bytes);
  EXPECT_EQ(r.get<double>(), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(r.get_string(), "message");
  auto v = r.get_vector<Pair>();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].a, 1.0 / 3);
  EXPECT_EQ(v[1].b, -2);
  EXPECT_TRUE(r.at_end());
  std::string cut = bytes.substr(0, bytes.size() - 1);
  ByteReader short_reader(cut);
  short_reader.get<double>();
  short_reader.get_string();
  EXPECT_THROW(short_reader.get_vector<Pair>(), std::runtime_error);
}
