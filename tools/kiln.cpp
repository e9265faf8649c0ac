// kiln: the command-line tool. `kiln run` starts a distributed job on this machine, as torchrun's
// standalone mode (kiln::distributed::launch does the work):
//
//   kiln run --nproc-per-node 4 ./train --epochs 3
//
// Exit status: 0 when every rank exited with 0; 1 when one failed (or the job timed out),
// 128 + the signal when the launcher was interrupted; 2 on a usage error.
#include <kiln/distributed/launcher.h>

#include <kiln/core/error.h>

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

namespace {

// Where `--` ends kiln's own options (`kiln run --nproc-per-node 2 -- prog ...`), or argc when
// there is none before the program. Each option of `run` takes a value, given as its next
// argument or after '='.
int end_of_options(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") return i;
    if (arg == "run") continue;
    if (arg.rfind("-", 0) != 0) return argc;  // the program: its own `--` is its business
    if (arg.find('=') == std::string::npos && arg != "-h" && arg != "--help") ++i;
  }
  return argc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln: tools for kiln programs"};
  app.require_subcommand(1);
  kiln::distributed::LaunchOptions options;
  double timeout_s = 0;
  CLI::App* run = app.add_subcommand(
      "run", "Start a program once per rank, with RANK, WORLD_SIZE, MASTER_ADDR, ... set");
  run->add_option("--nproc-per-node", options.nproc_per_node, "Ranks to start on this machine")
      ->check(CLI::PositiveNumber);
  run->add_option("--master-addr", options.master_addr, "Address of rank 0's store")
      ->capture_default_str();
  run->add_option("--master-port", options.master_port, "Port of rank 0's store (0: a free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  run->add_option("--timeout-s", timeout_s, "Stop the job after this many seconds (0: never)")
      ->check(CLI::NonNegativeNumber);
  // Everything from the program on is the program's own command line.
  run->prefix_command();
  const int options_end = end_of_options(argc, argv);
  CLI11_PARSE(app, options_end, argv);

  options.command = run->remaining();
  for (int i = options_end + 1; i < argc; ++i) options.command.push_back(argv[i]);
  if (options.command.empty()) {
    std::cerr << "kiln run: expected a program to run after the options\n" << run->help();
    return 2;
  }
  if (timeout_s > 0)
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  try {
    return kiln::distributed::launch(options, std::cerr).exit_code;
  } catch (const kiln::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
