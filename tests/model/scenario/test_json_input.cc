// Strict JSON reading with file and path in every error (model/scenario/json_input.h).
#include "model/scenario/json_input.h"

#include <fstream>

#include <gtest/gtest.h>

namespace scenario {
namespace {

const std::string kFile = "s.json";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ScenarioJsonInput, TypedFieldsWithDefaultsAndRanges) {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"name": "node1", "port": 9093, "ratio": 0.5, "on": true, "ack": "all", "whole": 3.0})");
  ObjectReader r(Value(kFile, j, "$"));
  EXPECT_EQ(r.string("name"), "node1");
  EXPECT_EQ(r.integer("port", 9092, 1, 65535), 9093);
  EXPECT_EQ(r.integer("missing", 9092, 1, 65535), 9092);
  EXPECT_DOUBLE_EQ(r.number("ratio", 0, 1), 0.5);
  EXPECT_TRUE(r.boolean("on", false));
  EXPECT_FALSE(r.boolean("off", false));
  EXPECT_EQ(r.choice("ack", {"0", "1", "all"}), "all");
  EXPECT_EQ(r.integer("whole", 0, 10), 3);
  EXPECT_NO_THROW(r.finish());
}

TEST(ScenarioJsonInput, ErrorsNameFilePathAndWhatWasExpected) {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "hosts": [{"name": "a", "id": "x"}, {"name": 7, "id": 300, "kind": "kafak", "frac": 2.5}],
    "odd key": {"v": [1]}
  })");
  const Value root(kFile, j, "$");
  ObjectReader r(root);
  std::vector<Value> hosts = r.required("hosts").as_array();
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[0]).integer("id", 1, 255); }),
            "s.json: at $.hosts[0].id: expected an integer from 1 to 255, got \"x\" (a string)");
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[1]).integer("id", 1, 255); }),
            "s.json: at $.hosts[1].id: expected an integer from 1 to 255, got 300 (an integer)");
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[1]).integer("frac", 0, 10); }),
            "s.json: at $.hosts[1].frac: expected an integer from 0 to 10, got 2.5 (a number)");
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[1]).string("name"); }),
            "s.json: at $.hosts[1].name: expected a string, got 7 (an integer)");
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[1]).choice("kind", {"zookeeper", "kafka", "client"}); }),
            "s.json: at $.hosts[1].kind: expected one of \"zookeeper\", \"kafka\", \"client\", got "
            "\"kafak\" (did you mean \"kafka\"?)");
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[0]).string("address"); }),
            "s.json: at $.hosts[0]: missing the required field \"address\"");
  EXPECT_EQ(error_of([&] { ObjectReader(r.required("odd key")).required("v").as_array(2); }),
            "s.json: at $[\"odd key\"].v: expected an array of at least 2 elements, got 1");
  EXPECT_EQ(error_of([&] { ObjectReader(r.required("odd key")).integer("v", 0, 1); }),
            "s.json: at $[\"odd key\"].v: expected an integer from 0 to 1, got [1] (an array)");
  EXPECT_EQ(error_of([&] { ObjectReader(hosts[0]).required("name").as_array(); }),
            "s.json: at $.hosts[0].name: expected an array, got \"a\" (a string)");
  EXPECT_EQ(error_of([&] { ObjectReader{Value(kFile, j["hosts"], "$.hosts")}; }),
            "s.json: at $.hosts: expected an object, got [{\"id\":\"x\",\"name\":\"a\"},{\"frac\":2.5,\"i... (an array)");
}

TEST(ScenarioJsonInput, UnknownFieldsAreErrorsWithADidYouMean) {
  const nlohmann::json j = nlohmann::json::parse(R"({"name": "a", "adress": "10.0.0.1"})");
  ObjectReader r(Value(kFile, j, "$.hosts[0]"));
  r.string("name");
  r.string("address", "");
  EXPECT_EQ(error_of([&] { r.finish(); }),
            "s.json: at $.hosts[0].adress: unknown field \"adress\" (did you mean \"address\"?); "
            "known fields here: address, name");
  // A field the caller accepts without reading it this time is not unknown.
  EXPECT_NO_THROW(r.finish({"adress"}));

  const nlohmann::json far = nlohmann::json::parse(R"({"name": "a", "colour": 1})");
  ObjectReader f(Value(kFile, far, "$"));
  f.string("name");
  EXPECT_EQ(error_of([&] { f.finish(); }),
            "s.json: at $.colour: unknown field \"colour\"; known fields here: name");
}

TEST(ScenarioJsonInput, PropertiesAreWrittenAsAPropertiesFileWouldHoldThem) {
  const nlohmann::json j = nlohmann::json::parse(
      R"({"p": {"acks": "all", "retries": 5, "enable.idempotence": true, "ratio": 0.5, "ms": 6000.0}, "bad": {"x": [1]}})");
  ObjectReader r(Value(kFile, j, "$"));
  const std::map<std::string, std::string> p = r.properties("p");
  EXPECT_EQ(p, (std::map<std::string, std::string>{{"acks", "all"},
                                                   {"enable.idempotence", "true"},
                                                   {"ms", "6000"},
                                                   {"ratio", "0.5"},
                                                   {"retries", "5"}}));
  EXPECT_TRUE(r.properties("none").empty());
  EXPECT_EQ(error_of([&] { r.properties("bad"); }),
            "s.json: at $.bad.x: expected a property value (a string, a number or a boolean), got "
            "[1] (an array)");
}

TEST(ScenarioJsonInput, MalformedJsonNamesLineAndColumn) {
  // The position is where the parser stopped: the end of line 3, after "tru".
  const std::string text = "{\n  \"a\": 1,\n  \"b\": tru\n}\n";
  const std::string e = error_of([&] { parse_json(kFile, text); });
  EXPECT_EQ(e.rfind("s.json: malformed JSON at line 3, column 11: syntax error", 0), 0u) << e;
  EXPECT_EQ(error_of([&] { parse_json(kFile, ""); }).rfind("s.json: malformed JSON at line 1, column 1", 0),
            0u);
  EXPECT_EQ(error_of([&] { read_json_file("/nonexistent/dir/s.json"); }),
            "/nonexistent/dir/s.json: cannot read the file: no such file");
  EXPECT_EQ(error_of([&] { read_json_file(""); }), "\"\": cannot read the file: an empty file name");
}

TEST(ScenarioJsonInput, AFieldNamedTwiceIsAnError) {
  // nlohmann keeps the last of two equal keys; the reader must not guess
  // which one the author meant.
  EXPECT_EQ(error_of([&] { parse_json(kFile, R"({"a": 1, "a": 2})"); }),
            "s.json: at $: the field \"a\" appears twice");
  EXPECT_EQ(error_of([&] {
              parse_json(kFile, R"({"hosts": [{"name": "n1"}, {"name": "n2", "x": {}, "name": "n3"}]})");
            }),
            "s.json: at $.hosts[1]: the field \"name\" appears twice");
  EXPECT_EQ(error_of([&] { parse_json(kFile, R"({"a": [[1], {"b.c": {"d": 1, "d": 1}}]})"); }),
            "s.json: at $.a[1][\"b.c\"]: the field \"d\" appears twice");
  // The same name in different objects is fine.
  EXPECT_EQ(parse_json(kFile, R"({"a": {"x": 1}, "b": {"x": 2}})").at("b").at("x"), 2);
}

TEST(ScenarioJsonInput, NestingIsBoundedInsteadOfOverflowingTheStack) {
  const auto nested = [](int n) { return std::string(static_cast<size_t>(n), '[') + std::string(static_cast<size_t>(n), ']'); };
  EXPECT_TRUE(parse_json(kFile, nested(512)).is_array());
  EXPECT_EQ(error_of([&] { parse_json(kFile, nested(513)); }), "s.json: at $: the JSON nests more than 512 levels deep");
  EXPECT_EQ(error_of([&] { parse_json(kFile, nested(100000)); }),
            "s.json: at $: the JSON nests more than 512 levels deep");
}

TEST(ScenarioJsonInput, ANumberBeyondADoubleIsMalformedInputWithItsPosition) {
  EXPECT_EQ(error_of([&] { parse_json(kFile, "{\n  \"duration_s\": 1e999\n}"); }),
            "s.json: malformed JSON at line 2, column 21: number overflow parsing '1e999'");
}

TEST(ScenarioJsonInput, ReadsAFile) {
  const std::string path = ::testing::TempDir() + "kafkasim_json_input.json";
  {
    std::ofstream out(path);
    out << R"({"seed": 7})";
  }
  const nlohmann::json j = read_json_file(path);
  EXPECT_EQ(j.at("seed"), 7);
}

}  // namespace
}  // namespace scenario
