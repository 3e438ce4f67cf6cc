#include "model/scenario/expect.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "model/properties.h"

namespace scenario {

ExpectationError::ExpectationError(size_t column, const std::string& what)
    : std::runtime_error(fmt::format("column {}: {}", column, what)), column_(column) {}

namespace {

// --- tokens ------------------------------------------------------------------

enum class Tok { end, integer, real, string, ident, op, lparen, rparen, lbracket, rbracket, comma, dot };

struct Token {
  Tok kind = Tok::end;
  std::string text;  // the identifier, operator or decoded string
  int64_t integer = 0;
  double real = 0;
  size_t column = 1;
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto is_ident_start = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.column = i + 1;
    if (is_digit(c)) {
      size_t j = i;
      while (j < s.size() && is_digit(s[j])) ++j;
      bool real = false;
      if (j < s.size() && s[j] == '.') {
        real = true;
        ++j;
        if (j >= s.size() || !is_digit(s[j])) throw ExpectationError(j + 1, "expected a digit after '.'");
        while (j < s.size() && is_digit(s[j])) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        real = true;
        ++j;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (j >= s.size() || !is_digit(s[j])) throw ExpectationError(j + 1, "expected the exponent's digits");
        while (j < s.size() && is_digit(s[j])) ++j;
      }
      if (j < s.size() && (is_ident_start(s[j]))) {
        throw ExpectationError(j + 1, fmt::format("unexpected '{}' after a number", s[j]));
      }
      const std::string text(s.substr(i, j - i));
      if (real) {
        t.kind = Tok::real;
        t.real = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(t.real)) throw ExpectationError(t.column, "number out of range: " + text);
      } else {
        t.kind = Tok::integer;
        int64_t v = 0;
        for (const char d : text) {
          const int digit = d - '0';
          if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) {
            throw ExpectationError(t.column, "integer out of range: " + text);
          }
          v = v * 10 + digit;
        }
        t.integer = v;
      }
      t.text = text;
      i = j;
    } else if (is_ident_start(c)) {
      size_t j = i;
      while (j < s.size() && (is_ident_start(s[j]) || is_digit(s[j]))) ++j;
      t.kind = Tok::ident;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (c == '"') {
      size_t j = i + 1;
      std::string text;
      for (;;) {
        if (j >= s.size()) throw ExpectationError(t.column, "unterminated string");
        const char d = s[j];
        if (d == '"') break;
        if (d == '\\') {
          if (j + 1 >= s.size()) throw ExpectationError(j + 1, "unterminated escape");
          const char e = s[j + 1];
          if (e == '"' || e == '\\') text += e;
          else if (e == 'n') text += '\n';
          else if (e == 't') text += '\t';
          else throw ExpectationError(j + 1, fmt::format("unknown escape '\\{}' (known: \\\" \\\\ \\n \\t)", e));
          j += 2;
          continue;
        }
        text += d;
        ++j;
      }
      t.kind = Tok::string;
      t.text = std::move(text);
      i = j + 1;
    } else {
      static const char* const two[] = {"==", "!=", "<=", ">=", "&&", "||"};
      std::string op;
      for (const char* o : two) {
        if (s.substr(i, 2) == o) op = o;
      }
      if (op.empty()) {
        switch (c) {
          case '<': case '>': case '+': case '-': case '*': case '/': case '%': case '!':
            op = std::string(1, c);
            break;
          case '(': t.kind = Tok::lparen; break;
          case ')': t.kind = Tok::rparen; break;
          case '[': t.kind = Tok::lbracket; break;
          case ']': t.kind = Tok::rbracket; break;
          case ',': t.kind = Tok::comma; break;
          case '.': t.kind = Tok::dot; break;
          case '=':
            throw ExpectationError(t.column, "'=' is not an operator; compare with '=='");
          default: {
            // A byte outside printable ASCII (the first of a UTF-8 "≤", say)
            // is shown by its value: printed raw it would be half a character.
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u >= 0x7f) {
              throw ExpectationError(t.column,
                                     fmt::format("unexpected byte 0x{:02x} (only ASCII is understood; write <=, "
                                                 ">=, != for the symbols)",
                                                 u));
            }
            throw ExpectationError(t.column, fmt::format("unexpected character '{}'", c));
          }
        }
        if (t.kind != Tok::end) {
          t.text = std::string(1, c);
          out.push_back(t);
          ++i;
          continue;
        }
      }
      t.kind = Tok::op;
      t.text = op;
      i += op.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.column = s.size() + 1;
  out.push_back(end);
  return out;
}

bool is_keyword(const std::string& s) {
  return s == "and" || s == "or" || s == "not" || s == "true" || s == "false" || s == "null" ||
         s == "len";
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::end: return "the end";
    case Tok::string: return fmt::format("\"{}\"", model::printable(t.text));
    default: return fmt::format("'{}'", t.text);
  }
}

}  // namespace

// --- the tree ------------------------------------------------------------------

struct Expectation::Node {
  enum class Kind { literal, path, negate, logical_not, binary, len };
  struct Segment {
    std::string field;                 // .field (or the first name)
    std::vector<nlohmann::json> keys;  // [k] or [k1, k2]; empty for a field
  };
  Kind kind = Kind::literal;
  std::string op;  // for binary: "==", "&&", "+" ...
  int lhs = -1;
  int rhs = -1;
  size_t column = 1;
  nlohmann::json value;           // literal
  std::vector<Segment> segments;  // path
  std::string path_text;          // path, canonical
};

Expectation::Expectation() = default;
Expectation::Expectation(const Expectation&) = default;
Expectation& Expectation::operator=(const Expectation&) = default;
Expectation::Expectation(Expectation&&) noexcept = default;
Expectation& Expectation::operator=(Expectation&&) noexcept = default;
Expectation::~Expectation() = default;

class ExpectationParser {
 public:
  using N = Expectation::Node;
  ExpectationParser(std::vector<Token> tokens, std::vector<N>& nodes)
      : tokens_(std::move(tokens)), nodes_(nodes) {}

  // Parsing and evaluation recurse: an expression nested deeper than this
  // (a thousand "not"s, say) is an error rather than a stack overflow.
  static constexpr int kMaxDepth = 256;

  int parse() {
    const int root = parse_or();
    if (peek().kind != Tok::end) {
      throw ExpectationError(peek().column, fmt::format("expected an operator or the end, found {}",
                                                        describe(peek())));
    }
    // A long chain ("1 + 1 + ... + 1") is parsed in a loop but evaluated by
    // recursion down its left side: its height counts too. Children come
    // before their parents in nodes_.
    std::vector<int> height(nodes_.size(), 1);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const N& n = nodes_[i];
      for (int child : {n.lhs, n.rhs}) {
        if (child >= 0) height[i] = std::max(height[i], height[static_cast<size_t>(child)] + 1);
      }
      if (height[i] > kMaxDepth + 1) too_deep(n.column);  // a leaf is 1: n nestings make n + 1
    }
    return root;
  }

 private:
  [[noreturn]] static void too_deep(size_t column) {
    throw ExpectationError(column, fmt::format("the expression nests more than {} levels deep", kMaxDepth));
  }
  struct Nesting {
    explicit Nesting(ExpectationParser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) too_deep(parser.peek().column);
    }
    ~Nesting() { --parser.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    ExpectationParser& parser;
  };

  const Token& peek() const { return tokens_[pos_]; }
  const Token& take() { return tokens_[pos_++]; }
  bool at_op(const char* op) const { return peek().kind == Tok::op && peek().text == op; }
  bool at_word(const char* w) const { return peek().kind == Tok::ident && peek().text == w; }

  int add(N n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  int binary(const std::string& op, int lhs, int rhs, size_t column) {
    N n;
    n.kind = N::Kind::binary;
    n.op = op;
    n.lhs = lhs;
    n.rhs = rhs;
    n.column = column;
    return add(std::move(n));
  }

  int parse_or() {
    int lhs = parse_and();
    while (at_op("||") || at_word("or")) {
      const size_t column = take().column;
      lhs = binary("||", lhs, parse_and(), column);
    }
    return lhs;
  }
  int parse_and() {
    int lhs = parse_not();
    while (at_op("&&") || at_word("and")) {
      const size_t column = take().column;
      lhs = binary("&&", lhs, parse_not(), column);
    }
    return lhs;
  }
  int parse_not() {
    if (at_op("!") || at_word("not")) {
      const Nesting nesting(*this);
      N n;
      n.kind = N::Kind::logical_not;
      n.column = take().column;
      n.lhs = parse_not();
      return add(std::move(n));
    }
    return parse_comparison();
  }
  static bool is_comparison(const Token& t) {
    return t.kind == Tok::op && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                 t.text == "<=" || t.text == ">" || t.text == ">=");
  }
  int parse_comparison() {
    const int lhs = parse_sum();
    if (!is_comparison(peek())) return lhs;
    const Token op = take();
    const int rhs = parse_sum();
    if (is_comparison(peek())) {
      throw ExpectationError(peek().column,
                             "comparisons do not chain; write 'a < b && b < c' instead");
    }
    return binary(op.text, lhs, rhs, op.column);
  }
  int parse_sum() {
    int lhs = parse_product();
    while (at_op("+") || at_op("-")) {
      const Token op = take();
      lhs = binary(op.text, lhs, parse_product(), op.column);
    }
    return lhs;
  }
  int parse_product() {
    int lhs = parse_unary();
    while (at_op("*") || at_op("/") || at_op("%")) {
      const Token op = take();
      lhs = binary(op.text, lhs, parse_unary(), op.column);
    }
    return lhs;
  }
  int parse_unary() {
    if (at_op("-")) {
      const Nesting nesting(*this);
      N n;
      n.kind = N::Kind::negate;
      n.column = take().column;
      n.lhs = parse_unary();
      return add(std::move(n));
    }
    return parse_primary();
  }
  void expect(Tok kind, const char* what) {
    if (peek().kind != kind) {
      throw ExpectationError(peek().column, fmt::format("expected {}, found {}", what, describe(peek())));
    }
    take();
  }
  int parse_primary() {
    const Token& t = peek();
    N n;
    n.column = t.column;
    switch (t.kind) {
      case Tok::integer:
        n.value = take().integer;
        return add(std::move(n));
      case Tok::real:
        n.value = take().real;
        return add(std::move(n));
      case Tok::string:
        n.value = take().text;
        return add(std::move(n));
      case Tok::lparen: {
        const Nesting nesting(*this);
        take();
        const int inner = parse_or();
        expect(Tok::rparen, "')'");
        return inner;
      }
      case Tok::ident:
        break;
      default:
        throw ExpectationError(t.column, fmt::format("expected a value, a field or '(', found {}",
                                                     describe(t)));
    }
    if (t.text == "true" || t.text == "false") {
      n.value = take().text == "true";
      return add(std::move(n));
    }
    if (t.text == "null") {
      take();
      n.value = nullptr;
      return add(std::move(n));
    }
    if (t.text == "len") {
      const Nesting nesting(*this);
      take();
      expect(Tok::lparen, "'(' after len");
      n.kind = N::Kind::len;
      n.lhs = parse_or();
      expect(Tok::rparen, "')'");
      return add(std::move(n));
    }
    if (is_keyword(t.text)) {
      throw ExpectationError(t.column, fmt::format("expected a value, found the keyword '{}'", t.text));
    }
    return parse_path();
  }
  int parse_path() {
    N n;
    n.kind = N::Kind::path;
    n.column = peek().column;
    n.segments.push_back({take().text, {}});
    n.path_text = n.segments.back().field;
    for (;;) {
      if (peek().kind == Tok::dot) {
        take();
        if (peek().kind != Tok::ident) {
          throw ExpectationError(peek().column, fmt::format("expected a field name after '.', found {}",
                                                            describe(peek())));
        }
        n.segments.push_back({take().text, {}});
        n.path_text += "." + n.segments.back().field;
      } else if (peek().kind == Tok::lbracket) {
        take();
        N::Segment seg;
        std::string text = "[";
        for (;;) {
          const Token& k = peek();
          if (k.kind == Tok::integer) {
            seg.keys.emplace_back(k.integer);
            text += k.text;
          } else if (k.kind == Tok::string) {
            seg.keys.emplace_back(k.text);
            text += nlohmann::json(k.text).dump();
          } else {
            throw ExpectationError(k.column, fmt::format("a subscript is a number or a \"string\", found {}",
                                                         describe(k)));
          }
          take();
          if (peek().kind == Tok::comma) {
            take();
            text += ",";
            continue;
          }
          expect(Tok::rbracket, "',' or ']'");
          break;
        }
        n.path_text += text + "]";
        n.segments.push_back(std::move(seg));
      } else {
        break;
      }
    }
    return add(std::move(n));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<N>& nodes_;
};

Expectation Expectation::parse(std::string_view text) {
  Expectation e;
  e.text_ = std::string(text);
  ExpectationParser parser(tokenize(text), e.nodes_);
  const int root = parser.parse();
  // The root is kept last so that evaluate() finds it.
  if (root != static_cast<int>(e.nodes_.size()) - 1) {
    e.nodes_.push_back(e.nodes_[static_cast<size_t>(root)]);
  }
  return e;
}

std::vector<std::string> Expectation::paths() const {
  std::vector<std::string> out;
  for (const Node& n : nodes_) {
    if (n.kind != Node::Kind::path) continue;
    bool seen = false;
    for (const std::string& p : out) seen = seen || p == n.path_text;
    if (!seen) out.push_back(n.path_text);
  }
  return out;
}

// --- evaluation ------------------------------------------------------------------

namespace {

struct EvalError {
  std::string what;
};

// A value during evaluation: JSON scalars become one of these; arrays and
// objects are kept by pointer (only len() and == null can use them).
struct Value {
  std::variant<std::monostate, bool, int64_t, double, std::string, const nlohmann::json*> v;
};

std::string kind_name(const Value& x) {
  switch (x.v.index()) {
    case 0: return "null";
    case 1: return "a boolean";
    case 2: case 3: return "a number";
    case 4: return "a string";
    default: return std::get<5>(x.v)->is_array() ? "an array" : "an object";
  }
}

std::string show(const Value& x) {
  switch (x.v.index()) {
    case 0: return "null";
    case 1: return std::get<1>(x.v) ? "true" : "false";
    case 2: return fmt::format("{}", std::get<2>(x.v));
    case 3: return nlohmann::json(std::get<3>(x.v)).dump();
    case 4: return nlohmann::json(std::get<4>(x.v)).dump();
    default: {
      const std::string s = std::get<5>(x.v)->dump();
      return s.size() <= 60 ? s : s.substr(0, 57) + "...";
    }
  }
}

Value from_json(const nlohmann::json& j) {
  if (j.is_null()) return {std::monostate{}};
  if (j.is_boolean()) return {j.get<bool>()};
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return {static_cast<double>(u)};
    return {static_cast<int64_t>(u)};
  }
  if (j.is_number_integer()) return {j.get<int64_t>()};
  if (j.is_number_float()) return {j.get<double>()};
  if (j.is_string()) return {j.get<std::string>()};
  return {&j};
}

bool is_number(const Value& x) { return x.v.index() == 2 || x.v.index() == 3; }

// -1, 0, 1 for a < b, a == b, a > b; nullopt when unordered (NaN).
std::optional<int> compare_numbers(const Value& a, const Value& b) {
  if (a.v.index() == 2 && b.v.index() == 2) {
    const int64_t x = std::get<2>(a.v);
    const int64_t y = std::get<2>(b.v);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.v.index() == 3 && b.v.index() == 3) {
    const double x = std::get<3>(a.v);
    const double y = std::get<3>(b.v);
    if (std::isnan(x) || std::isnan(y)) return std::nullopt;
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  // An integer against a real, exactly.
  const bool flip = a.v.index() == 3;
  const int64_t i = std::get<2>(flip ? b.v : a.v);
  const double d = std::get<3>(flip ? a.v : b.v);
  if (std::isnan(d)) return std::nullopt;
  int r = 0;
  if (d >= 9223372036854775808.0) {
    r = -1;
  } else if (d < -9223372036854775808.0) {
    r = 1;
  } else {
    const double t = std::trunc(d);
    const auto ti = static_cast<int64_t>(t);
    if (i != ti) {
      r = i < ti ? -1 : 1;
    } else {
      r = d > t ? -1 : (d < t ? 1 : 0);
    }
  }
  return flip ? -r : r;
}

double as_real(const Value& x) {
  return x.v.index() == 2 ? static_cast<double>(std::get<2>(x.v)) : std::get<3>(x.v);
}

std::string key_text(const nlohmann::json& k) {
  return k.is_string() ? k.get<std::string>() : k.dump();
}

}  // namespace

class ExpectationEvaluator {
 public:
  using N = Expectation::Node;
  ExpectationEvaluator(const std::vector<N>& nodes, const nlohmann::json& doc) : nodes_(nodes), doc_(doc) {}

  Value eval(int index) {
    const N& n = nodes_[static_cast<size_t>(index)];
    if (evaluated_.empty()) evaluated_.resize(nodes_.size(), false);
    evaluated_[static_cast<size_t>(index)] = true;
    switch (n.kind) {
      case N::Kind::literal:
        return from_json(n.value);
      case N::Kind::path:
        return resolve(n);
      case N::Kind::negate: {
        const Value x = eval(n.lhs);
        if (x.v.index() == 2) {
          const int64_t i = std::get<2>(x.v);
          if (i == std::numeric_limits<int64_t>::min()) throw EvalError{"integer overflow in '-'"};
          return {-i};
        }
        if (x.v.index() == 3) return {-std::get<3>(x.v)};
        throw EvalError{fmt::format("'-' needs a number, got {} ({})", kind_name(x), show(x))};
      }
      case N::Kind::logical_not:
        return {!truth(eval(n.lhs), "!")};
      case N::Kind::len: {
        const Value x = eval(n.lhs);
        if (x.v.index() == 4) return {static_cast<int64_t>(std::get<4>(x.v).size())};
        if (x.v.index() == 5) return {static_cast<int64_t>(std::get<5>(x.v)->size())};
        throw EvalError{fmt::format("len() needs an array, an object or a string, got {}", kind_name(x))};
      }
      case N::Kind::binary:
        return binary(n);
    }
    throw EvalError{"unknown node"};
  }

  bool truth(const Value& x, const char* where) {
    if (x.v.index() != 1) {
      throw EvalError{fmt::format("'{}' needs true or false, got {} ({})", where, kind_name(x), show(x))};
    }
    return std::get<1>(x.v);
  }

  // The value of every path read, for a failed expectation's report.
  std::vector<std::pair<std::string, std::string>> shown;

  // A path that && or || did not need was never resolved, so a misspelt
  // field there would pass unnoticed ("true || nosuch == 1"): each is
  // walked by names only (see walk).
  void check_unevaluated_paths() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const N& n = nodes_[i];
      if (n.kind == N::Kind::path && !(i < evaluated_.size() && evaluated_[i])) (void)walk(n, true);
    }
  }

 private:
  Value binary(const N& n) {
    if (n.op == "&&") return {truth(eval(n.lhs), "&&") && truth(eval(n.rhs), "&&")};
    if (n.op == "||") return {truth(eval(n.lhs), "||") || truth(eval(n.rhs), "||")};
    const Value a = eval(n.lhs);
    const Value b = eval(n.rhs);
    if (n.op == "==" || n.op == "!=") {
      const bool eq = equal(a, b, n.op);
      return {n.op == "==" ? eq : !eq};
    }
    if (n.op == "<" || n.op == "<=" || n.op == ">" || n.op == ">=") {
      std::optional<int> c;
      if (is_number(a) && is_number(b)) {
        c = compare_numbers(a, b);
      } else if (a.v.index() == 4 && b.v.index() == 4) {
        const int r = std::get<4>(a.v).compare(std::get<4>(b.v));
        c = r < 0 ? -1 : (r > 0 ? 1 : 0);
      } else {
        throw EvalError{fmt::format("'{}' compares numbers or strings, not {} ({}) with {} ({})", n.op,
                                    kind_name(a), show(a), kind_name(b), show(b))};
      }
      if (!c) return {false};
      if (n.op == "<") return {*c < 0};
      if (n.op == "<=") return {*c <= 0};
      if (n.op == ">") return {*c > 0};
      return {*c >= 0};
    }
    // Arithmetic.
    if (!is_number(a) || !is_number(b)) {
      throw EvalError{fmt::format("'{}' needs numbers, got {} ({}) and {} ({})", n.op, kind_name(a),
                                  show(a), kind_name(b), show(b))};
    }
    const bool ints = a.v.index() == 2 && b.v.index() == 2;
    if (n.op == "%") {
      if (!ints) throw EvalError{"'%' needs integers"};
      if (std::get<2>(b.v) == 0) throw EvalError{"'%' by zero"};
      if (std::get<2>(b.v) == -1) return {int64_t{0}};
      return {std::get<2>(a.v) % std::get<2>(b.v)};
    }
    if (n.op == "/") {
      if (as_real(b) == 0) throw EvalError{"division by zero"};
      return {as_real(a) / as_real(b)};
    }
    if (ints) {
      int64_t r = 0;
      const int64_t x = std::get<2>(a.v);
      const int64_t y = std::get<2>(b.v);
      const bool overflow = n.op == "+"   ? __builtin_add_overflow(x, y, &r)
                            : n.op == "-" ? __builtin_sub_overflow(x, y, &r)
                                          : __builtin_mul_overflow(x, y, &r);
      if (overflow) throw EvalError{fmt::format("integer overflow in '{}'", n.op)};
      return {r};
    }
    const double x = as_real(a);
    const double y = as_real(b);
    return {n.op == "+" ? x + y : (n.op == "-" ? x - y : x * y)};
  }

  bool equal(const Value& a, const Value& b, const std::string& op) {
    if (a.v.index() == 0 || b.v.index() == 0) return a.v.index() == b.v.index();
    if (is_number(a) && is_number(b)) {
      const std::optional<int> c = compare_numbers(a, b);
      return c && *c == 0;
    }
    if (a.v.index() == b.v.index() && a.v.index() == 1) return std::get<1>(a.v) == std::get<1>(b.v);
    if (a.v.index() == b.v.index() && a.v.index() == 4) return std::get<4>(a.v) == std::get<4>(b.v);
    throw EvalError{fmt::format("'{}' compares values of one kind, not {} ({}) with {} ({})", op,
                                kind_name(a), show(a), kind_name(b), show(b))};
  }

  // Follows a path from the top of the verdict. For evaluation anything
  // missing is an EvalError. By names only (an operand a short-circuit
  // skipped), a missing field is still an error, but where the run decides
  // (an index, a key, a value that is not an object: a guard like
  // "len(a) > 2 && a[2] == 1" exists for that) the walk stops, with null.
  const nlohmann::json* walk(const N& n, bool names_only) const {
    const nlohmann::json* at = &doc_;
    std::string where = "the top level";
    std::string prefix;
    for (const N::Segment& seg : n.segments) {
      if (seg.keys.empty()) {
        if (names_only && !at->is_object()) return nullptr;
        at = field(*at, seg.field, where);
        prefix += (prefix.empty() ? "" : ".") + seg.field;
      } else if (at->is_array()) {
        if (seg.keys.size() != 1 || !seg.keys[0].is_number_integer()) {
          if (names_only) return nullptr;
          throw EvalError{fmt::format("{} is an array: index it with one number", where)};
        }
        const int64_t i = seg.keys[0].get<int64_t>();
        if (i < 0 || static_cast<uint64_t>(i) >= at->size()) {
          if (names_only) return nullptr;
          throw EvalError{fmt::format("index {} is outside {} ({} elements)", i, where, at->size())};
        }
        at = &(*at)[static_cast<size_t>(i)];
        prefix += fmt::format("[{}]", i);
      } else {
        std::string key;
        for (size_t k = 0; k < seg.keys.size(); ++k) key += (k == 0 ? "" : "-") + key_text(seg.keys[k]);
        if (names_only && (!at->is_object() || !at->contains(key))) return nullptr;
        at = field(*at, key, where);
        prefix += "[" + nlohmann::json(key).dump() + "]";
      }
      where = "'" + prefix + "'";
    }
    return at;
  }

  Value resolve(const N& n) {
    const nlohmann::json* at = walk(n, false);
    const Value v = from_json(*at);
    bool seen = false;
    for (const auto& [p, _] : shown) seen = seen || p == n.path_text;
    if (!seen) shown.emplace_back(n.path_text, show(v));
    return v;
  }

  static const nlohmann::json* field(const nlohmann::json& at, const std::string& name,
                                     const std::string& where) {
    if (!at.is_object()) {
      throw EvalError{fmt::format("{} is {}, it has no field '{}'", where,
                                  kind_name(from_json(at)), name)};
    }
    auto it = at.find(name);
    if (it != at.end()) return &*it;
    std::vector<std::string> fields;
    std::string known;
    for (auto f = at.begin(); f != at.end(); ++f) {
      if (fields.size() < 12) known += (fields.empty() ? "" : ", ") + f.key();
      fields.push_back(f.key());
    }
    const size_t listed = fields.size();
    if (listed > 12) known += ", …";
    std::string msg = fmt::format("no field '{}' in {}", name, where);
    if (const std::optional<std::string> near = model::nearest(name, fields)) {
      msg += fmt::format(" (did you mean '{}'?)", *near);
    }
    msg += listed == 0 ? "; it is empty" : fmt::format("; it has: {}", known);
    throw EvalError{msg};
  }

  const std::vector<N>& nodes_;
  const nlohmann::json& doc_;
  std::vector<bool> evaluated_;
};

Expectation::Result Expectation::evaluate(const nlohmann::json& document) const {
  Result r;
  ExpectationEvaluator ev(nodes_, document);
  try {
    const Value v = ev.eval(static_cast<int>(nodes_.size()) - 1);
    ev.check_unevaluated_paths();
    if (v.v.index() != 1) {
      r.outcome = Result::Outcome::error;
      r.detail = fmt::format("the expectation gives {} ({}), not true or false", kind_name(v), show(v));
      return r;
    }
    r.outcome = std::get<1>(v.v) ? Result::Outcome::held : Result::Outcome::failed;
    for (const auto& [path, value] : ev.shown) {
      r.detail += (r.detail.empty() ? "" : "; ") + path + " = " + value;
    }
  } catch (const EvalError& e) {
    r.outcome = Result::Outcome::error;
    r.detail = e.what;
  }
  return r;
}

}  // namespace scenario
