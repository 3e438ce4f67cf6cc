// The java.util.Properties reader shared by zoo.cfg and server.properties, and
// the typed look-ups whose errors name the source, the key and what was
// expected.
#include <string>

#include <gtest/gtest.h>

#include "model/properties.h"

namespace model {
namespace {

// Runs `fn`, which must throw ConfigError, and returns the error.
template <class Fn>
ConfigError config_error(Fn&& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return ConfigError("", "", "");
}

TEST(PropertiesParse, ThreeSeparatorsAndSurroundingWhitespace) {
  const Properties p = parse_properties(
      "a=1\n"
      "b:2\n"
      "c 3\n"
      "  d  =  4  \n"
      "e\t:\t5\n"
      "f   6\n"
      "g = = 7\n",  // only the first separator counts
      "test.properties");
  EXPECT_EQ(p.source, "test.properties");
  EXPECT_EQ(
      p.values,
      (std::map<std::string, std::string>{
          {"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"g", "= 7"}}));
}

TEST(PropertiesParse, WhitespaceThenSeparator) {
  // "key = value" and "key : value": the whitespace ends the key, then one
  // separator is skipped, as java.util.Properties does.
  const Properties p = parse_properties("k1 : v1\nk2 =v2\nk3= v3", "t");
  EXPECT_EQ(p.values.at("k1"), "v1");
  EXPECT_EQ(p.values.at("k2"), "v2");
  EXPECT_EQ(p.values.at("k3"), "v3");  // no newline at the end of the text
}

TEST(PropertiesParse, CommentsAndBlankLinesAndLineNumbers) {
  const Properties p = parse_properties(
      "# a comment\n"
      "! another comment\n"
      "\n"
      "   \t\n"
      "   # an indented comment\n"
      "tickTime=2000\n"
      "\n"
      "initLimit=10 # not a comment: part of the value\n",
      "zoo.cfg");
  EXPECT_EQ(p.values.size(), 2u);
  EXPECT_EQ(p.values.at("tickTime"), "2000");
  EXPECT_EQ(p.values.at("initLimit"), "10 # not a comment: part of the value");
  EXPECT_EQ(p.lines.at("tickTime"), 6);
  EXPECT_EQ(p.lines.at("initLimit"), 8);
}

TEST(PropertiesParse, AControlCharacterMeansNotAPropertiesFile) {
  const ConfigError e = config_error([] { parse_properties(std::string("a=1\nk\0ey=2\n", 11), "bin"); });
  EXPECT_EQ(e.message(), "line 2: control character 0x00: not a properties file");
  // Tabs and form feeds are white space to Java's reader.
  EXPECT_EQ(parse_properties("\ta\f=\t1\n", "ws").values.at("a"), "1");
}

TEST(PropertiesParse, LineEndings) {
  const Properties p = parse_properties("a=1\r\nb=2\rc=3\n", "t");
  EXPECT_EQ(p.values.at("a"), "1");
  EXPECT_EQ(p.values.at("b"), "2");
  EXPECT_EQ(p.values.at("c"), "3");
  EXPECT_EQ(p.lines.at("c"), 3);
}

TEST(PropertiesParse, KeyWithoutValue) {
  const Properties p = parse_properties("alone\nwith.sep=\nwith.colon:\n", "t");
  EXPECT_EQ(p.values.at("alone"), "");
  EXPECT_EQ(p.values.at("with.sep"), "");
  EXPECT_EQ(p.values.at("with.colon"), "");
}

TEST(PropertiesParse, ContinuationLines) {
  const Properties p = parse_properties(
      "servers=a:1,\\\n"
      "        b:2,\\\n"
      "   c:3\n"
      "next=x\n",
      "t");
  EXPECT_EQ(p.values.at("servers"), "a:1,b:2,c:3");  // leading whitespace of each part skipped
  EXPECT_EQ(p.lines.at("servers"), 1);
  EXPECT_EQ(p.values.at("next"), "x");
  EXPECT_EQ(p.lines.at("next"), 4);
}

TEST(PropertiesParse, EvenBackslashesDoNotContinue) {
  const Properties p = parse_properties(
      "path=C:\\\\dir\\\\\n"  // ends in two backslashes: an escaped backslash
      "three=x\\\\\\\n"       // three: an escaped backslash, then a continuation
      "  y\n",
      "t");
  EXPECT_EQ(p.values.at("path"), "C:\\dir\\");
  EXPECT_EQ(p.values.at("three"), "x\\y");
}

TEST(PropertiesParse, ContinuationLineIsNeverAComment) {
  const Properties p = parse_properties("a=1\\\n# still a\nb=2\n", "t");
  EXPECT_EQ(p.values.at("a"), "1# still a");
  EXPECT_EQ(p.values.at("b"), "2");
}

TEST(PropertiesParse, CommentLineDoesNotContinue) {
  const Properties p = parse_properties("# comment \\\na=1\n", "t");
  EXPECT_EQ(p.values.at("a"), "1");
}

TEST(PropertiesParse, ContinuationAtEndOfText) {
  const Properties p = parse_properties("a=1\\", "t");
  EXPECT_EQ(p.values.at("a"), "1");
}

TEST(PropertiesParse, Escapes) {
  const Properties p = parse_properties(
      "tab=a\\tb\n"
      "newline=a\\nb\n"
      "cr=a\\rb\n"
      "backslash=a\\\\b\n"
      "other=\\q\\#\\!\n"
      "unicode=\\u00e9\\u20AC\n"
      "pair=\\ud83d\\ude00\n",
      "t");
  EXPECT_EQ(p.values.at("tab"), "a\tb");
  EXPECT_EQ(p.values.at("newline"), "a\nb");
  EXPECT_EQ(p.values.at("cr"), "a\rb");
  EXPECT_EQ(p.values.at("backslash"), "a\\b");
  EXPECT_EQ(p.values.at("other"), "q#!");
  EXPECT_EQ(p.values.at("unicode"), "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(p.values.at("pair"), "\xf0\x9f\x98\x80");
}

TEST(PropertiesParse, EscapedSeparatorsAndSpacesInKeys) {
  const Properties p = parse_properties(
      "a\\=b=1\n"
      "c\\:d:2\n"
      "e\\ f 3\n"
      "\\#not.comment=4\n",
      "t");
  EXPECT_EQ(p.values.at("a=b"), "1");
  EXPECT_EQ(p.values.at("c:d"), "2");
  EXPECT_EQ(p.values.at("e f"), "3");
  EXPECT_EQ(p.values.at("#not.comment"), "4");
}

TEST(PropertiesParse, TrailingWhitespaceTrimmedUnlessEscaped) {
  const Properties p = parse_properties("a=x  \t\nb=x\\ \nc=\\  \n", "t");
  EXPECT_EQ(p.values.at("a"), "x");
  EXPECT_EQ(p.values.at("b"), "x ");
  EXPECT_EQ(p.values.at("c"), " ");
}

TEST(PropertiesParse, EscapedLeadingSpaceOfValueIsKept) {
  const Properties p = parse_properties("a=\\ x\n", "t");
  EXPECT_EQ(p.values.at("a"), " x");
}

TEST(PropertiesParse, EmptyText) {
  const Properties p = parse_properties("", "empty.cfg");
  EXPECT_TRUE(p.values.empty());
  EXPECT_EQ(p.source, "empty.cfg");
}

TEST(PropertiesParse, DuplicateKeyIsAnError) {
  const ConfigError e = config_error(
      [] { parse_properties("tickTime=2000\n# c\ninitLimit=5\ntickTime=3000\n", "zoo.cfg"); });
  EXPECT_EQ(e.source(), "zoo.cfg");
  EXPECT_EQ(e.key(), "tickTime");
  EXPECT_STREQ(e.what(), "zoo.cfg: key 'tickTime': duplicate key, first at line 1");
}

TEST(PropertiesParse, DuplicateAfterEscapesIsAnError) {
  // "a\u0062" and "ab" are the same key.
  const ConfigError e = config_error([] { parse_properties("ab=1\na\\u0062=2\n", "t"); });
  EXPECT_EQ(e.key(), "ab");
}

TEST(PropertiesParse, ValueWithoutKeyIsAnError) {
  const ConfigError e = config_error([] { parse_properties("a=1\n=2\n", "t.cfg"); });
  EXPECT_EQ(e.key(), "");
  EXPECT_STREQ(e.what(), "t.cfg: line 2: a value without a key");
}

TEST(PropertiesParse, MalformedUnicodeEscapeIsAnError) {
  EXPECT_EQ(config_error([] { parse_properties("a=\\u12g4\n", "t"); }).key(), "a");
  EXPECT_EQ(config_error([] { parse_properties("a=\\u12\n", "t"); }).key(), "a");
  EXPECT_EQ(config_error([] { parse_properties("a=\\ud83d\n", "t"); }).key(), "a");
  const ConfigError e = config_error([] { parse_properties("k\\uzzzz=1\n", "t"); });
  EXPECT_EQ(e.key(), "");
  EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos) << e.what();
}

TEST(PropertiesFromMap, KeepsValuesWithoutLines) {
  const Properties p =
      from_map({{"acks", "all"}, {"retries", "3"}}, "scenario.json:$.producers[0].config");
  EXPECT_EQ(p.source, "scenario.json:$.producers[0].config");
  EXPECT_EQ(p.values.at("acks"), "all");
  EXPECT_EQ(p.lines.at("retries"), 0);
  const ConfigError e = config_error([&] { p.get_int("acks", 0, 0, 10); });
  EXPECT_EQ(e.source(), "scenario.json:$.producers[0].config");
}

TEST(PropertiesConfigError, Format) {
  const ConfigError with_key("zoo.cfg", "tickTime", "expected a positive integer, got 'abc'");
  EXPECT_STREQ(with_key.what(), "zoo.cfg: key 'tickTime': expected a positive integer, got 'abc'");
  EXPECT_EQ(with_key.source(), "zoo.cfg");
  EXPECT_EQ(with_key.key(), "tickTime");
  EXPECT_EQ(with_key.message(), "expected a positive integer, got 'abc'");
  const ConfigError without_key("scenario.json:$.zookeeper", "", "two servers share id 1");
  EXPECT_STREQ(without_key.what(), "scenario.json:$.zookeeper: two servers share id 1");
  // Catchable as the standard exception it derives from.
  EXPECT_THROW(throw ConfigError("s", "k", "m"), std::runtime_error);
}

TEST(PropertiesGetInt, ValuesDefaultsAndSigns) {
  const Properties p = parse_properties("a=42\nb=-7\nc=+5\nd=0\n", "t");
  EXPECT_TRUE(p.has("a"));
  EXPECT_FALSE(p.has("z"));
  EXPECT_EQ(p.get("a"), "42");
  EXPECT_EQ(p.get("z"), std::nullopt);
  EXPECT_EQ(p.get_int("a", 1), 42);
  EXPECT_EQ(p.get_int("b", 1), -7);
  EXPECT_EQ(p.get_int("c", 1), 5);
  EXPECT_EQ(p.get_int("d", 1, 0, 10), 0);
  EXPECT_EQ(p.get_int("z", 99, 0, 10), 99);  // the default is not range-checked
  EXPECT_EQ(p.get_int("a", 0, 42, 42), 42);  // bounds are inclusive
}

TEST(PropertiesGetInt, NotAnIntegerNamesKeyAndExpectation) {
  const Properties p = parse_properties("tickTime=abc\n", "zoo.cfg");
  const ConfigError e =
      config_error([&] { p.get_int("tickTime", 2000, 1, 600000, "milliseconds"); });
  EXPECT_EQ(e.source(), "zoo.cfg");
  EXPECT_EQ(e.key(), "tickTime");
  EXPECT_STREQ(e.what(),
               "zoo.cfg: key 'tickTime': expected a positive integer (milliseconds, at most "
               "600000), got 'abc'");
}

TEST(PropertiesGetInt, MalformedNumbers) {
  for (const char* bad : {"", "1.5", "12abc", "0x10", "++1", "+-1", "1 2", "1e3"}) {
    const Properties p = from_map({{"k", bad}}, "t");
    EXPECT_THROW(p.get_int("k", 0), ConfigError) << "'" << bad << "'";
  }
}

TEST(PropertiesGetInt, OutOfRangeMessages) {
  const Properties p = parse_properties("port=0\nn=-1\nbig=99999999999999999999\nr=7\n", "t");
  EXPECT_STREQ(config_error([&] { p.get_int("port", 2181, 1, 65535); }).what(),
               "t: key 'port': expected a positive integer (at most 65535), got '0'");
  EXPECT_STREQ(config_error([&] { p.get_int("n", 0, 0); }).what(),
               "t: key 'n': expected a non-negative integer, got '-1'");
  EXPECT_STREQ(config_error([&] { p.get_int("big", 0); }).what(),
               "t: key 'big': expected an integer, got '99999999999999999999'");
  EXPECT_STREQ(config_error([&] { p.get_int("r", 0, 2, 5, "ticks"); }).what(),
               "t: key 'r': expected an integer (ticks, from 2 to 5), got '7'");
  EXPECT_STREQ(config_error([&] { p.get_int("r", 0, 10); }).what(),
               "t: key 'r': expected an integer (at least 10), got '7'");
}

TEST(PropertiesGetBool, TrueFalseYesNoAnyCase) {
  const Properties p =
      parse_properties("a=true\nb=FALSE\nc=yes\nd=No\ne=True\nf=maybe\ng=1\n", "t");
  EXPECT_TRUE(p.get_bool("a", false));
  EXPECT_FALSE(p.get_bool("b", true));
  EXPECT_TRUE(p.get_bool("c", false));
  EXPECT_FALSE(p.get_bool("d", true));
  EXPECT_TRUE(p.get_bool("e", false));
  EXPECT_TRUE(p.get_bool("absent", true));
  EXPECT_FALSE(p.get_bool("absent", false));
  EXPECT_STREQ(config_error([&] { p.get_bool("f", true); }).what(),
               "t: key 'f': expected true/false or yes/no, got 'maybe'");
  EXPECT_THROW(p.get_bool("g", true), ConfigError);
}

TEST(PropertiesGetString, ValueOrDefault) {
  const Properties p = parse_properties("dataDir=/tmp/zookeeper\nempty=\n", "t");
  EXPECT_EQ(p.get_string("dataDir", "/x"), "/tmp/zookeeper");
  EXPECT_EQ(p.get_string("empty", "/x"), "");
  EXPECT_EQ(p.get_string("absent", "/x"), "/x");
}

TEST(PropertiesRejectUnknown, KnownKeysAndPatternsPass) {
  const Properties p = parse_properties("tickTime=2000\nserver.1=a:1:2\n", "zoo.cfg");
  EXPECT_NO_THROW(p.reject_unknown(
      {"tickTime"}, [](const std::string& k) { return k.rfind("server.", 0) == 0; }));
  EXPECT_THROW(p.reject_unknown({"tickTime"}), ConfigError);
}

TEST(PropertiesRejectUnknown, SuggestsTheNearestKnownKey) {
  const Properties p = parse_properties(
      "zookeeper.connect=localhost:2181\nzookeeper.session.tmeout.ms=18000\n", "server.properties");
  const ConfigError e = config_error([&] {
    p.reject_unknown({"zookeeper.connect", "zookeeper.connection.timeout.ms",
                      "zookeeper.session.timeout.ms", "broker.id"});
  });
  EXPECT_EQ(e.source(), "server.properties");
  EXPECT_EQ(e.key(), "zookeeper.session.tmeout.ms");
  EXPECT_STREQ(e.what(),
               "server.properties: key 'zookeeper.session.tmeout.ms': unknown key; did you mean "
               "'zookeeper.session.timeout.ms'?");
}

TEST(PropertiesRejectUnknown, TranspositionCountsAsOneEdit) {
  const Properties p = parse_properties("tickTmie=2000\n", "zoo.cfg");
  const ConfigError e = config_error([&] { p.reject_unknown({"initLimit", "tickTime"}); });
  EXPECT_EQ(e.message(), "unknown key; did you mean 'tickTime'?");
}

TEST(PropertiesRejectUnknown, NoSuggestionWhenNothingIsClose) {
  const Properties p = parse_properties("completely.different=1\n", "zoo.cfg");
  const ConfigError e = config_error([&] { p.reject_unknown({"tickTime", "initLimit"}); });
  EXPECT_STREQ(e.what(), "zoo.cfg: key 'completely.different': unknown key");
}

TEST(PropertiesRejectUnknown, FirstUnknownInSortedOrder) {
  const Properties p = parse_properties("zzz=1\nbbb=2\nknown=3\naaa=4\n", "t");
  EXPECT_EQ(config_error([&] { p.reject_unknown({"known"}); }).key(), "aaa");
}

TEST(PropertiesEditDistance, Basics) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("tickTime", "tickTmie"), 1u);
  EXPECT_EQ(edit_distance("zookeeper.session.tmeout.ms", "zookeeper.session.timeout.ms"), 1u);
  EXPECT_EQ(edit_distance("abc", "abc"), 0u);
}

}  // namespace
}  // namespace model
