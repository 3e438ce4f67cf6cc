// Expectations: the predicates that make a scenario a regression check
// ("lost == 0", "max_stall_s <= 20", "final.partition[\"t\", 0].leader == 2").
//
// An expectation is a small expression evaluated against a JSON document —
// a run's verdict and final state, whatever shape the caller gives it. The
// language, in order of binding (loosest first):
//
//   a || b, a or b         either (short-circuit)
//   a && b, a and b        both (short-circuit)
//   !a, not a              negation
//   == != < <= > >=        comparison (one per level: `a < b < c` is an error)
//   + -                    integer arithmetic stays integer (overflow is an
//   * / %                  error); with a real operand it is real; `/` of two
//                          integers is real division, `%` integers only
//   -a                     negation
//   literals               42, 2.5, 1e3, "text" (with \" \\ \n \t escapes),
//                          true, false, null
//   paths                  name, a.b.c, a[0], a["key"], a["t", 0]
//   len(x)                 the size of an array, object or string
//   ( … )
//
// A path names fields of the document from its root. `[i]` on an array is
// the i-th element (0-based); `[k]` on an object is the field named k; several
// subscripts on an object, `[k1, k2]`, name the field "k1-k2" — the way Kafka
// writes a topic-partition, so `final.partition["t", 0]` is the field "t-0".
//
// Comparisons: numbers compare by value (an integer and a real exactly, never
// through a rounding conversion); strings compare by bytes; true/false and
// null only with == and !=; anything compares != to null. Comparing a string
// with a number, say, is an error rather than false: it is a mistake in the
// scenario, not an outcome of the run.
//
// Errors: parse() throws ExpectationError with the column (1-based) and what
// was expected; evaluate() reports a missing field (with the fields that are
// there, and a did-you-mean), a type mismatch or an overflow as Result::error,
// which the command line treats as bad input, not as a failed expectation.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace scenario {

class ExpectationError : public std::runtime_error {
 public:
  ExpectationError(size_t column, const std::string& what);
  size_t column() const { return column_; }  // 1-based

 private:
  size_t column_;
};

class Expectation {
 public:
  // Throws ExpectationError.
  static Expectation parse(std::string_view text);

  Expectation(const Expectation&);
  Expectation& operator=(const Expectation&);
  Expectation(Expectation&&) noexcept;
  Expectation& operator=(Expectation&&) noexcept;
  ~Expectation();

  const std::string& text() const { return text_; }
  // Every path the expression reads, in the order they appear, as written
  // canonically ("final.partition[\"t\",0].leader"), without duplicates.
  std::vector<std::string> paths() const;

  struct Result {
    enum class Outcome { held, failed, error };
    Outcome outcome = Outcome::error;
    // For failed: the value of each path read ("lost = 3; max_stall_s = 12.5").
    // For error: what went wrong ("no field 'lsot' at the top level (did you mean 'lost'?)").
    std::string detail;
  };
  Result evaluate(const nlohmann::json& document) const;

 private:
  struct Node;
  friend class ExpectationParser;
  friend class ExpectationEvaluator;
  Expectation();
  std::string text_;
  std::vector<Node> nodes_;  // the root is the last
};

}  // namespace scenario
