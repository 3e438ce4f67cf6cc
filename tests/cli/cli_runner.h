// What the command-line tests share: the built binary (KAFKASIM_BINARY) run
// in a directory of the test's with its stdout and stderr to files, and the
// small scenario both test_cli.cc and the documentation's examples use.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kafkasim::cli_testing {

namespace fs = std::filesystem;

// One ZooKeeper server and broker on node1, a second broker on node2, the lab
// producer and consumer on a client host; kafka2 is killed at 15 s.
// docs/cli.md's explore example runs it as small.json.
constexpr const char* kSmall = R"({
  "name": "cli small",
  "duration_s": 30,
  "hosts": [
    {"name": "node1", "address": "10.0.0.1", "zookeeper": {"id": 1}, "brokers": [{"id": 1}]},
    {"name": "node2", "address": "10.0.0.2", "brokers": [{"id": 2}]},
    {"name": "client", "address": "10.0.0.10", "clients": ["producer", "consumer"]}
  ],
  "topics": [{"name": "t", "partitions": 1, "replication_factor": 2}],
  "workload": {"type": "lab"},
  "faults": [{"at": 15, "action": "kill", "target": "kafka2"}],
  "expect": ["lost == 0", "acknowledged > 0"]
}
)";

struct Output {
  int code = -1;  // the exit code, or 1000 + the signal that ended it
  std::string out;
  std::string err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Starts kafkasim in `dir` with stdout and stderr to dir/TAG.stdout and
// dir/TAG.stderr.
inline pid_t start_kafkasim(const fs::path& dir, const std::vector<std::string>& args, const std::string& tag) {
  std::vector<std::string> argv_s = {KAFKASIM_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const fs::path out = dir / (tag + ".stdout");
  const fs::path err = dir / (tag + ".stderr");
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) _exit(127);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(127);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for a kafkasim start_kafkasim started and reads what it wrote.
inline Output finish_kafkasim(const fs::path& dir, pid_t pid, const std::string& tag) {
  int status = 0;
  Output r;
  if (::waitpid(pid, &status, 0) == pid) {
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  }
  r.out = slurp(dir / (tag + ".stdout"));
  r.err = slurp(dir / (tag + ".stderr"));
  return r;
}

}  // namespace kafkasim::cli_testing
