// The subcommands of kafkasim (docs/cli.md). Each takes the arguments after
// its name and returns the process's exit code; bad usage throws
// cli::UsageError, other bad input cli::BadInput or scenario::InputError
// (main.cc turns those into a message and exit 2).
#pragma once

#include <string>
#include <vector>

namespace cli {

// The build's commit (12 hex digits), or "unknown".
const char* build_commit();

// Usage text of a command ("" for the whole program).
std::string usage(const std::string& command);

int cmd_run(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_merge(const std::vector<std::string>& args);
int cmd_explore(const std::vector<std::string>& args);
int cmd_describe(const std::vector<std::string>& args);
int cmd_zk(const std::vector<std::string>& args);
int cmd_fuzz(const std::vector<std::string>& args);

// Exit code of an interrupted sweep (128 + SIGINT, as shells report it).
inline constexpr int kExitInterrupted = 130;

}  // namespace cli
