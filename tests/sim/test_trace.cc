#include "sim/trace.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sim {
namespace {

TEST(Trace, RendersCanonicalJsonLines) {
  Time now = Time::from_us(12'204'000);
  Trace trace(&now);
  std::ostringstream json;
  trace.set_json_sink(&json);
  trace.emit("node1", "zk", "elected", {{"epoch", 3}, {"leader", true}, {"peer", "node\"2"}});
  EXPECT_EQ(json.str(),
            "{\"t_us\":12204000,\"host\":\"node1\",\"proc\":\"zk\",\"kind\":\"elected\","
            "\"epoch\":3,\"leader\":true,\"peer\":\"node\\\"2\"}\n");
  EXPECT_EQ(trace.records(), 1u);
}

TEST(Trace, RendersTheTextColumns) {
  Time now = Time::from_us(12'204'000);
  Trace trace(&now);
  std::ostringstream text;
  trace.set_text_sink(&text);
  trace.emit("broker-2", "kafka", "controller", {{"epoch", 3}, {"state", "elected"}});
  EXPECT_EQ(text.str(), "   12.204000s  broker-2    kafka       controller  epoch=3  state=elected\n");
}

TEST(Trace, EscapesControlCharacters) {
  std::string out;
  append_json_string(out, std::string("a\nb\x01", 4));
  EXPECT_EQ(out, "\"a\\nb\\u0001\"");
}

TEST(Trace, HashDependsOnEveryByteAndOnOrder) {
  Time now = Time::zero();
  Trace a(&now), b(&now), c(&now), d(&now);
  a.emit("h", "p", "x", {{"v", 1}});
  a.emit("h", "p", "y");
  b.emit("h", "p", "x", {{"v", 1}});
  b.emit("h", "p", "y");
  c.emit("h", "p", "x", {{"v", 2}});
  c.emit("h", "p", "y");
  d.emit("h", "p", "y");
  d.emit("h", "p", "x", {{"v", 1}});
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a.hash(), c.hash());
  EXPECT_NE(a.hash(), d.hash());
}

TEST(Trace, HashIsTheSameWhetherOrNotLinesAreWritten) {
  Time now = Time::from_us(5);
  Trace quiet(&now), loud(&now);
  std::ostringstream sink;
  loud.set_json_sink(&sink);
  loud.set_text_sink(&sink);
  loud.keep_lines(true);
  for (Trace* t : {&quiet, &loud}) t->emit("h", "p", "k", {{"n", uint64_t{1} << 63}});
  EXPECT_EQ(quiet.hash(), loud.hash());
  ASSERT_EQ(loud.lines().size(), 1u);
  EXPECT_EQ(loud.lines()[0],
            "{\"t_us\":5,\"host\":\"h\",\"proc\":\"p\",\"kind\":\"k\",\"n\":9223372036854775808}");
}

TEST(Trace, FirstDifferenceNamesTheLine) {
  EXPECT_EQ(first_difference({"a", "b"}, {"a", "b"}), std::nullopt);
  EXPECT_EQ(first_difference({"a", "b"}, {"a", "c"}), 1u);
  EXPECT_EQ(first_difference({"a"}, {"a", "b"}), 1u);
  EXPECT_EQ(first_difference({}, {"a"}), 0u);
}

}  // namespace
}  // namespace sim
