// The command-line examples of README.md and docs/*.md, run and compared with
// what the binary prints, so that the documentation stays true.
//
// An example is a fenced block whose lines start with "$ kafkasim ..." (or
// "$ build/release/tools/kafkasim/kafkasim ..."): each such command runs, in
// the block's order, in a fresh directory of the block's own, which holds a
// link to the repository's scenarios/ and the files the documents name
// without showing (small.json, misspelt.json); "$ echo $?" prints the exit
// code of the command before it, and a trailing "# exit N" comment on a
// command asks for exit code N. The lines under a command are what it must
// print (stderr, then stdout, as the documents show progress above results),
// with:
//   - a line that is only "..." or "…": any number of lines left out;
//   - "..." inside a line: any text;
//   - a line ending in "(stderr)": progress (stderr), any number of lines;
//   - "commit    <hex>": any build commit, "-dirty" or "unknown" (the
//     document was made at one);
//   - trailing spaces ignored.
// Lines between two gaps must follow each other in the output, as shown, and
// unless a block starts (ends) with a gap, its first (last) line must be the
// output's first (last).
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/cli/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace kafkasim::cli_testing;  // NOLINT(google-build-using-namespace): the runner, kSmall

struct Command {
  std::string text;  // as written, after "$ "
  size_t line = 0;   // 1-based, in its document
  std::vector<std::string> expected;
};

struct Example {
  std::string document;
  std::vector<Command> commands;
};

// How gtest shows an example (in test listings): where it is.
void PrintTo(const Example& e, std::ostream* out) {
  *out << e.document << ":" << (e.commands.empty() ? 0 : e.commands.front().line);
}

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string trim(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t");
  return first == std::string::npos ? "" : rtrim(s.substr(first));
}

bool runs_kafkasim(const std::string& command) {
  return command.rfind("kafkasim ", 0) == 0 || command.rfind("build/release/tools/kafkasim/kafkasim ", 0) == 0 ||
         command == "echo $?";
}

// The fenced blocks of a Markdown file that hold kafkasim commands.
std::vector<Example> examples_of(const std::string& document) {
  std::vector<Example> out;
  const std::vector<std::string> text = lines(slurp(fs::path(KAFKASIM_SOURCE_DIR) / document));
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t indent = text[i].find("```");
    if (indent == std::string::npos || trim(text[i].substr(0, indent)) != "") continue;
    Example example{document, {}};
    size_t j = i + 1;
    for (; j < text.size() && trim(text[j]).rfind("```", 0) != 0; ++j) {
      const std::string line = text[j].size() >= indent ? text[j].substr(indent) : trim(text[j]);
      if (line.rfind("$ ", 0) == 0) {
        Command c{line.substr(2), j + 1, {}};
        // A command continued with a trailing backslash.
        while (!c.text.empty() && c.text.back() == '\\' && j + 1 < text.size()) {
          c.text.pop_back();
          c.text += " " + trim(text[++j]);
        }
        example.commands.push_back(std::move(c));
      } else if (!example.commands.empty()) {
        example.commands.back().expected.push_back(line);
      }
    }
    bool all_kafkasim = !example.commands.empty();
    for (const Command& c : example.commands) all_kafkasim = all_kafkasim && runs_kafkasim(c.text);
    if (all_kafkasim) out.push_back(std::move(example));
    i = j;
  }
  return out;
}

// The words of a command line: whitespace-separated, '...' quoting, and a
// trailing "# ..." comment taken off (its "exit N" kept).
std::vector<std::string> words(const std::string& command, std::optional<int>& exit_code) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == '\'') {
      const size_t close = command.find('\'', i + 1);
      if (close == std::string::npos) {
        ADD_FAILURE() << "an unterminated quote in: " << command;
        word += command.substr(i + 1);
        in_word = true;
        break;
      }
      word += command.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '#' && !in_word) {
      std::smatch m;
      const std::string comment = command.substr(i);
      if (std::regex_search(comment, m, std::regex("exit (\\d+)"))) exit_code = std::stoi(m[1]);
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

std::string normalise(const std::string& line) {
  static const std::regex commit("^commit(\\s+)([0-9a-f]{12}(-dirty)?|unknown)$");
  return std::regex_replace(rtrim(line), commit, "commit$1<commit>");
}

// Whether an output line is what a document line shows ("..." matches any text).
bool line_matches(const std::string& shown, const std::string& actual) {
  size_t from = 0;
  size_t at = 0;
  bool first = true;
  while (true) {
    const size_t gap = shown.find("...", from);
    const std::string part = shown.substr(from, gap == std::string::npos ? std::string::npos : gap - from);
    if (first) {
      if (actual.compare(0, part.size(), part) != 0) return false;
      at = part.size();
      first = false;
    } else if (gap == std::string::npos) {
      return actual.size() >= at + part.size() && actual.compare(actual.size() - part.size(), part.size(), part) == 0;
    } else {
      const size_t found = actual.find(part, at);
      if (found == std::string::npos) return false;
      at = found + part.size();
    }
    if (gap == std::string::npos) return at == actual.size();
    from = gap + 3;
  }
}

// Empty when the output shows what the document does; else what is missing.
// Unless the document starts (ends) with a gap, the output's first (last)
// line is its first (last).
std::string compare(const std::vector<std::string>& shown_lines, const std::vector<std::string>& actual_lines) {
  std::vector<std::vector<std::string>> segments(1);
  for (const std::string& raw : shown_lines) {
    const std::string line = normalise(raw);
    // A progress line stands for all of them: how many there are depends on
    // the wall clock.
    const bool progress = line.size() >= 8 && line.compare(line.size() - 8, 8, "(stderr)") == 0;
    if (trim(line) == "..." || trim(line) == "…" || progress) {
      segments.emplace_back();
    } else {
      segments.back().push_back(line);
    }
  }
  std::vector<std::string> actual;
  for (const std::string& l : actual_lines) actual.push_back(normalise(l));
  size_t at = 0;
  for (size_t s = 0; s < segments.size(); ++s) {
    const std::vector<std::string>& segment = segments[s];
    if (segment.empty()) continue;
    const bool first = s == 0;                    // no gap before it
    const bool last = s + 1 == segments.size();  // no gap after it
    bool found = false;
    for (size_t start = at; start + segment.size() <= actual.size() && !found; ++start) {
      if (first && start != 0) break;
      if (last && start + segment.size() != actual.size()) continue;
      bool all = true;
      for (size_t k = 0; k < segment.size() && all; ++k) all = line_matches(segment[k], actual[start + k]);
      if (all) {
        found = true;
        at = start + segment.size();
      }
    }
    if (!found) {
      std::string missing;
      for (const std::string& l : segment) missing += "    " + l + "\n";
      return fmt::format("these lines, in this order, after what matched before{}{}:\n{}",
                         first ? ", from the output's first line" : "", last ? ", to its last" : "", missing);
    }
  }
  return "";
}

void run_example(const Example& example) {
  std::string tmpl = (fs::path(::testing::TempDir()) / "kafkasim-doc-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  fs::create_directory_symlink(fs::path(KAFKASIM_SOURCE_DIR) / "scenarios", dir / "scenarios");
  std::ofstream(dir / "small.json") << kSmall;
  // docs/cli.md's misspelt key, in the small scenario.
  std::string misspelt = kSmall;
  misspelt.insert(misspelt.find("  \"hosts\""), "  \"kafka\": {\"properties\": {\"zookeeper.session.tmeout.ms\": 6000}},\n");
  std::ofstream(dir / "misspelt.json") << misspelt;

  int last_exit = 0;
  int n = 0;
  for (const Command& c : example.commands) {
    SCOPED_TRACE(example.document + ":" + std::to_string(c.line) + ": $ " + c.text);
    std::vector<std::string> output;
    if (c.text == "echo $?") {
      output = {std::to_string(last_exit)};
    } else {
      std::optional<int> exit_code;
      std::vector<std::string> args = words(c.text, exit_code);
      args.erase(args.begin());  // the binary
      const std::string tag = "cmd" + std::to_string(n++);
      const Output r = finish_kafkasim(dir, start_kafkasim(dir, args, tag), tag);
      last_exit = r.code;
      ASSERT_LT(r.code, 1000) << "killed by a signal\n" << r.err;
      if (exit_code) {
        EXPECT_EQ(r.code, *exit_code) << r.out << r.err;
      }
      // stderr first: the documents show progress (stderr) above results.
      output = lines(r.err);
      for (const std::string& l : lines(r.out)) output.push_back(l);
    }
    const std::string missing = compare(c.expected, output);
    EXPECT_EQ(missing, "") << "the output:\n" << [&] {
      std::string all;
      for (const std::string& l : output) all += "    " + l + "\n";
      return all;
    }();
  }
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir, ec);
}

// The matcher itself: it must be able to fail.
TEST(DocExamples, TheMatcherRefusesWhatTheOutputDoesNotShow) {
  EXPECT_EQ(compare({"a", "b"}, {"a", "b"}), "");
  EXPECT_NE(compare({"b"}, {"a", "b"}), "") << "output before the first line shown needs a gap";
  EXPECT_NE(compare({"a"}, {"a", "b"}), "") << "output after the last line shown needs a gap";
  EXPECT_EQ(compare({"...", "b"}, {"a", "b"}), "");
  EXPECT_EQ(compare({"a", "..."}, {"a", "b"}), "");
  EXPECT_EQ(compare({"...", "b", "..."}, {"a", "b", "c"}), "");
  EXPECT_NE(compare({"a", "b"}, {"a", "x", "b"}), "") << "lines between gaps follow each other";
  EXPECT_EQ(compare({"a", "...", "b"}, {"a", "x", "b"}), "");
  EXPECT_NE(compare({"b", "...", "a"}, {"a", "x", "b"}), "") << "segments keep their order";
  EXPECT_EQ(compare({"lost = ..."}, {"lost = 9"}), "");
  EXPECT_NE(compare({"lost = 2"}, {"lost = 9"}), "");
  EXPECT_EQ(compare({"x ... y ... z"}, {"x 1 y 2 z"}), "");
  EXPECT_NE(compare({"x ... z"}, {"x 1 y"}), "");
  EXPECT_NE(compare({"ab"}, {"abc"}), "") << "a line matches whole";
  EXPECT_EQ(compare({"commit    2637b8c67e31"}, {"commit    d17651b67d70"}), "");
  EXPECT_EQ(compare({"commit    2637b8c67e31"}, {"commit    unknown"}), "") << "a build outside git";
  EXPECT_EQ(compare({"commit    2637b8c67e31"}, {"commit    d17651b67d70-dirty"}), "") << "a build with local changes";
  EXPECT_EQ(compare({"sweep: 1/10 seeds  ETA 54s      (stderr)", "t"}, {"t"}), "");
  EXPECT_EQ(compare({"explore: 4/4 runs   (stderr)", "t"}, {"explore: 3/4 runs", "explore: 4/4 runs", "t"}), "");
  std::optional<int> exit_code;
  EXPECT_EQ(words("kafkasim run 'a b' --seed 1   # exit 1: the loss", exit_code),
            (std::vector<std::string>{"kafkasim", "run", "a b", "--seed", "1"}));
  EXPECT_EQ(exit_code, 1);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    EXPECT_EQ(words("kafkasim run 'a b", exit_code), (std::vector<std::string>{"kafkasim", "run", "a b"}));
  }
  EXPECT_EQ(failures.size(), 1) << "an unterminated quote is a failure, not a hang";
}

// Every example of the documents, each a test of its own (ctest runs them
// side by side), named after its document and line: DocExample.Runs/docs_cli_md_line_69.
std::vector<Example> every_example() {
  std::vector<Example> out;
  for (const char* document : {"README.md", "docs/cli.md", "docs/fuzzing.md", "docs/scenario-format.md"}) {
    for (Example& example : examples_of(document)) out.push_back(std::move(example));
  }
  return out;
}

class DocExample : public ::testing::TestWithParam<Example> {};

TEST_P(DocExample, Runs) { run_example(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Docs, DocExample, ::testing::ValuesIn(every_example()),
                         [](const ::testing::TestParamInfo<Example>& info) {
                           std::string name = info.param.document + "_line_" +
                                              std::to_string(info.param.commands.front().line);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(DocExamples, TheDocumentsHoldTheirExamples) {
  size_t commands = 0;
  for (const Example& example : every_example()) commands += example.commands.size();
  // README: 1; cli.md: 6 and an echo; fuzzing.md: 2. Fewer would mean the
  // blocks are no longer found, and nothing checked.
  EXPECT_GE(commands, 10u);
}

}  // namespace
