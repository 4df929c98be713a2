#pragma once
#include <string>
#include <variant>

#include "server/daemon_config.hpp"

namespace spmvd {

// Either a configuration, or the text CLI11 printed (help or a usage error) and an exit code.
struct ConfigExit {
  int exit_code = 0;
  std::string message;
};

// Flags, plus `--config FILE` (TOML / INI keys named as the long flags). Flags win over the file.
std::variant<DaemonConfig, ConfigExit> parse_daemon_config(int argc, char** argv);

}  // namespace spmvd
