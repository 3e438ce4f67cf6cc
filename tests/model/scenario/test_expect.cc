// The expectation language of scenario files (model/scenario/expect.h).
#include "model/scenario/expect.h"

#include <gtest/gtest.h>

namespace scenario {
namespace {

using Outcome = Expectation::Result::Outcome;

const nlohmann::json kVerdict = nlohmann::json::parse(R"({
  "lost": 0,
  "duplicates": 2,
  "max_stall_s": 12.5,
  "producer_gave_up": true,
  "controller": null,
  "stalls": [5.5, 7.25, 12.5],
  "final": {"partition": {"t-0": {"leader": 2, "isr": [2, 3]}, "light_bulb-1": {"leader": -1, "isr": []}}},
  "version": "2.2",
  "big": 18446744073709551615
})");

Outcome outcome(const std::string& text, const nlohmann::json& doc = kVerdict) {
  return Expectation::parse(text).evaluate(doc).outcome;
}
std::string detail(const std::string& text, const nlohmann::json& doc = kVerdict) {
  return Expectation::parse(text).evaluate(doc).detail;
}
std::string parse_error(const std::string& text) {
  try {
    (void)Expectation::parse(text);
  } catch (const ExpectationError& e) {
    return e.what();
  }
  return "(parsed)";
}

TEST(ScenarioExpectation, ComparisonsOnTheVerdict) {
  EXPECT_EQ(outcome("lost == 0"), Outcome::held);
  EXPECT_EQ(outcome("duplicates == 0"), Outcome::failed);
  EXPECT_EQ(outcome("max_stall_s <= 20"), Outcome::held);
  EXPECT_EQ(outcome("max_stall_s < 12.5"), Outcome::failed);
  EXPECT_EQ(outcome("max_stall_s >= 12.5"), Outcome::held);
  EXPECT_EQ(outcome("duplicates != 0"), Outcome::held);
  EXPECT_EQ(outcome("duplicates > 1"), Outcome::held);
  EXPECT_EQ(outcome("producer_gave_up"), Outcome::held);
  EXPECT_EQ(outcome("producer_gave_up == false"), Outcome::failed);
  EXPECT_EQ(outcome("version == \"2.2\""), Outcome::held);
  EXPECT_EQ(outcome("version < \"3.9\""), Outcome::held);
  EXPECT_EQ(outcome("controller == null"), Outcome::held);
  EXPECT_EQ(outcome("lost != null"), Outcome::held);
}

TEST(ScenarioExpectation, PathsIndexArraysAndTopicPartitions) {
  EXPECT_EQ(outcome("final.partition[\"t\", 0].leader == 2"), Outcome::held);
  EXPECT_EQ(outcome("final.partition[\"t-0\"].leader == 2"), Outcome::held);
  EXPECT_EQ(outcome("final.partition[\"light_bulb\",1].leader == -1"), Outcome::held);
  EXPECT_EQ(outcome("final.partition[\"t\",0].isr[1] == 3"), Outcome::held);
  EXPECT_EQ(outcome("len(final.partition[\"t\",0].isr) == 2"), Outcome::held);
  EXPECT_EQ(outcome("len(final.partition[\"light_bulb\",1].isr) == 0"), Outcome::held);
  EXPECT_EQ(outcome("stalls[2] == max_stall_s"), Outcome::held);
  EXPECT_EQ(outcome("len(stalls) == 3 && len(final.partition) == 2 && len(version) == 3"), Outcome::held);
}

TEST(ScenarioExpectation, LogicAndArithmetic) {
  EXPECT_EQ(outcome("lost == 0 && duplicates == 0"), Outcome::failed);
  EXPECT_EQ(outcome("lost == 0 and duplicates == 2"), Outcome::held);
  EXPECT_EQ(outcome("lost == 1 || duplicates == 2"), Outcome::held);
  EXPECT_EQ(outcome("lost == 1 or duplicates == 3"), Outcome::failed);
  EXPECT_EQ(outcome("!(lost == 1)"), Outcome::held);
  EXPECT_EQ(outcome("not lost == 0"), Outcome::failed);
  // && binds tighter than ||.
  EXPECT_EQ(outcome("lost == 0 || lost == 1 && duplicates == 0"), Outcome::held);
  EXPECT_EQ(outcome("(lost == 0 || lost == 1) && duplicates == 0"), Outcome::failed);
  EXPECT_EQ(outcome("lost + duplicates * 3 == 6"), Outcome::held);
  EXPECT_EQ(outcome("(lost + duplicates) * 3 == 6"), Outcome::held);
  EXPECT_EQ(outcome("duplicates - 5 == -3"), Outcome::held);
  EXPECT_EQ(outcome("-duplicates == -2"), Outcome::held);
  EXPECT_EQ(outcome("duplicates / 4 == 0.5"), Outcome::held);  // real division
  EXPECT_EQ(outcome("7 % 3 == 1"), Outcome::held);
  EXPECT_EQ(outcome("max_stall_s * 2 == 25"), Outcome::held);
  EXPECT_EQ(outcome("1e3 == 1000 && 2.5e-1 == 0.25"), Outcome::held);
  // Short-circuit: the right side is not evaluated (no division by zero),
  // though its fields are checked (AnOperandLeftUnevaluatedStillHasItsFieldsChecked).
  EXPECT_EQ(outcome("lost == 0 || 1 / lost == 1"), Outcome::held);
  EXPECT_EQ(outcome("lost == 1 && 1 / lost == 1"), Outcome::failed);
}

TEST(ScenarioExpectation, IntegersAndRealsCompareExactly) {
  // 2^53 + 1 is not a double; a conversion would call these equal.
  const nlohmann::json doc = {{"n", int64_t{9007199254740993}}, {"r", 9007199254740992.0}};
  EXPECT_EQ(outcome("n == r", doc), Outcome::failed);
  EXPECT_EQ(outcome("n > r", doc), Outcome::held);
  EXPECT_EQ(outcome("r < n", doc), Outcome::held);
  EXPECT_EQ(outcome("2 == 2.0"), Outcome::held);
  EXPECT_EQ(outcome("2 < 2.5 && -3 > -3.5 && 3 >= 2.999"), Outcome::held);
  // An unsigned field beyond int64 is a real: still larger than any int64.
  EXPECT_EQ(outcome("big > 9223372036854775807"), Outcome::held);
}

TEST(ScenarioExpectation, AFailedExpectationShowsTheValuesItRead) {
  EXPECT_EQ(detail("duplicates == 0 && max_stall_s <= 20"), "duplicates = 2");
  EXPECT_EQ(detail("lost + duplicates == 0 || max_stall_s < 10"),
            "lost = 0; duplicates = 2; max_stall_s = 12.5");
  EXPECT_EQ(detail("final.partition[\"t\",0].leader == 1"), "final.partition[\"t\",0].leader = 2");
}

TEST(ScenarioExpectation, EvaluationErrorsAreNotFailures) {
  const Expectation::Result r = Expectation::parse("lsot == 0").evaluate(kVerdict);
  EXPECT_EQ(r.outcome, Outcome::error);
  EXPECT_NE(r.detail.find("no field 'lsot' in the top level (did you mean 'lost'?)"), std::string::npos)
      << r.detail;

  EXPECT_EQ(detail("final.partition[\"t\",9].leader == 1"),
            "no field 't-9' in 'final.partition' (did you mean 't-0'?); it has: light_bulb-1, t-0");
  EXPECT_EQ(detail("stalls[3] == 1"), "index 3 is outside 'stalls' (3 elements)");
  EXPECT_EQ(detail("stalls[\"x\"] == 1"), "'stalls' is an array: index it with one number");
  EXPECT_EQ(detail("lost.count == 1"), "'lost' is a number, it has no field 'count'");
  EXPECT_EQ(detail("version == 2"), "'==' compares values of one kind, not a string (\"2.2\") with a number (2)");
  EXPECT_EQ(detail("version < 2"), "'<' compares numbers or strings, not a string (\"2.2\") with a number (2)");
  EXPECT_EQ(detail("producer_gave_up < true"),
            "'<' compares numbers or strings, not a boolean (true) with a boolean (true)");
  EXPECT_EQ(detail("lost + 1"), "the expectation gives a number (1), not true or false");
  EXPECT_EQ(detail("lost && true"), "'&&' needs true or false, got a number (0)");
  EXPECT_EQ(detail("len(lost) == 0"), "len() needs an array, an object or a string, got a number");
  EXPECT_EQ(detail("lost / 0 == 1"), "division by zero");
  EXPECT_EQ(detail("9223372036854775807 + 1 > 0"), "integer overflow in '+'");
  EXPECT_EQ(detail("2.5 % 2 == 0"), "'%' needs integers");
}

TEST(ScenarioExpectation, AnOperandLeftUnevaluatedStillHasItsFieldsChecked) {
  // && and || short-circuit, but a misspelt field on the side they skip is
  // still bad input, not a pass or a failure.
  EXPECT_EQ(detail("true || nosuch == 1"), "no field 'nosuch' in the top level; it has: big, controller, "
                                           "duplicates, final, lost, max_stall_s, producer_gave_up, stalls, "
                                           "version");
  EXPECT_EQ(outcome("false && lsot == 1"), Outcome::error);
  EXPECT_EQ(detail("false && final.partition[\"t\", 0].leadr == 1"),
            "no field 'leadr' in 'final.partition[\"t-0\"]' (did you mean 'leader'?); it has: isr, leader");
  // Keys and indices depend on the run: a guard may skip one that is missing.
  EXPECT_EQ(outcome("len(stalls) > 5 && stalls[5] == 1"), Outcome::failed);
  EXPECT_EQ(outcome("true || final.partition[\"t\", 9].leader == 1"), Outcome::held);
  EXPECT_EQ(outcome("false && final.partition[\"nope\"].isr[7] == 1"), Outcome::failed);
  // The key written is the one followed: entries of one collection may differ
  // in shape (a producer's client entry has "acknowledged", a consumer's
  // "consumed").
  const nlohmann::json clients = nlohmann::json::parse(R"({
    "lost": 0,
    "clients": {"a-consumer": {"consumed": 5}, "b-producer": {"acknowledged": 7}}
  })");
  EXPECT_EQ(outcome("lost == 0 || clients[\"b-producer\"].acknowledged > 0", clients), Outcome::held);
  EXPECT_EQ(outcome("lost == 1 && clients[\"b-producer\"].acknowledged > 0", clients), Outcome::failed);
  EXPECT_EQ(detail("lost == 0 || clients[\"b-producer\"].acknowlegded > 0", clients),
            "no field 'acknowlegded' in 'clients[\"b-producer\"]' (did you mean 'acknowledged'?); it has: "
            "acknowledged");
  // A value that is not an object ends the check (the run decides).
  EXPECT_EQ(outcome("controller == null || controller.x == 1"), Outcome::held);
}

TEST(ScenarioExpectation, ParseErrorsNameTheColumn) {
  EXPECT_EQ(parse_error("lost = 0"), "column 6: '=' is not an operator; compare with '=='");
  EXPECT_EQ(parse_error("lost =="), "column 8: expected a value, a field or '(', found the end");
  EXPECT_EQ(parse_error("0 < lost < 2"), "column 10: comparisons do not chain; write 'a < b && b < c' instead");
  EXPECT_EQ(parse_error("(lost == 0"), "column 11: expected ')', found the end");
  EXPECT_EQ(parse_error("lost == 0)"), "column 10: expected an operator or the end, found ')'");
  EXPECT_EQ(parse_error("a.[0]"), "column 3: expected a field name after '.', found '['");
  EXPECT_EQ(parse_error("a[b] == 1"), "column 3: a subscript is a number or a \"string\", found 'b'");
  EXPECT_EQ(parse_error("a[0 == 1"), "column 5: expected ',' or ']', found '=='");
  EXPECT_EQ(parse_error("v == \"abc"), "column 6: unterminated string");
  EXPECT_EQ(parse_error("v == \"a\\q\""), "column 8: unknown escape '\\q' (known: \\\" \\\\ \\n \\t)");
  EXPECT_EQ(parse_error("lost == 1.x"), "column 11: expected a digit after '.'");
  EXPECT_EQ(parse_error("lost == 12abc"), "column 11: unexpected 'a' after a number");
  EXPECT_EQ(parse_error("lost == 99999999999999999999"), "column 9: integer out of range: 99999999999999999999");
  EXPECT_EQ(parse_error("lost == 0 $"), "column 11: unexpected character '$'");
  EXPECT_EQ(parse_error("lost \u2264 1"),
            "column 6: unexpected byte 0xe2 (only ASCII is understood; write <=, >=, != for the symbols)");
  EXPECT_EQ(parse_error("and == 1"), "column 1: expected a value, found the keyword 'and'");
  EXPECT_EQ(parse_error(""), "column 1: expected a value, a field or '(', found the end");
  EXPECT_EQ(parse_error("len lost"), "column 5: expected '(' after len, found 'lost'");
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(ScenarioExpectation, NestingIsBoundedInsteadOfOverflowingTheStack) {
  // 256 levels are fine, one more is an error at the token that went over;
  // 20,000 (which used to crash the parser) are the same error.
  EXPECT_EQ(outcome(repeat("not ", 256) + "true"), Outcome::held);
  EXPECT_EQ(parse_error(repeat("not ", 257) + "true"),
            "column 1025: the expression nests more than 256 levels deep");
  EXPECT_EQ(parse_error(repeat("not ", 20000) + "true"),
            "column 1025: the expression nests more than 256 levels deep");
  EXPECT_EQ(parse_error(repeat("-", 300) + "1 == 1"), "column 257: the expression nests more than 256 levels deep");
  EXPECT_EQ(parse_error(repeat("(", 300) + "1"), "column 257: the expression nests more than 256 levels deep");
  EXPECT_EQ(parse_error(repeat("len(", 300) + "x"), "column 1025: the expression nests more than 256 levels deep");
  // A long flat chain is parsed in a loop but evaluated by recursion.
  EXPECT_EQ(outcome("lost" + repeat(" + 1", 200) + " == 200"), Outcome::held);
  EXPECT_EQ(parse_error("lost" + repeat(" + 1", 100000) + " == 0"),
            "column 1030: the expression nests more than 256 levels deep");
}

TEST(ScenarioExpectation, PathsAreListedCanonicallyOnce) {
  const Expectation e =
      Expectation::parse("lost == 0 && final.partition[ \"t\" , 0 ].leader == 2 || lost < len(stalls)");
  EXPECT_EQ(e.paths(), (std::vector<std::string>{"lost", "final.partition[\"t\",0].leader", "stalls"}));
  EXPECT_EQ(e.text(), "lost == 0 && final.partition[ \"t\" , 0 ].leader == 2 || lost < len(stalls)");
}

TEST(ScenarioExpectation, CopiesEvaluateAlike) {
  const Expectation a = Expectation::parse("duplicates == 2 && max_stall_s > 10");
  Expectation b = a;
  Expectation c = std::move(b);
  EXPECT_EQ(c.evaluate(kVerdict).outcome, Outcome::held);
  EXPECT_EQ(a.evaluate(kVerdict).outcome, Outcome::held);
}

}  // namespace
}  // namespace scenario
