#include "tests/integration/daemon_process.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace spmvd::testing {

DaemonProcess::DaemonProcess(const std::string& binary, const std::string& work_dir,
                             std::vector<std::string> extra_args) {
  const std::string port_file = work_dir + "/port";
  const std::string metrics_port_file = work_dir + "/metrics-port";
  std::filesystem::remove(port_file);
  std::filesystem::remove(metrics_port_file);
  std::vector<std::string> args{binary, "--listen", "127.0.0.1:0", "--port-file", port_file,
                                "--metrics-listen", "127.0.0.1:0", "--metrics-port-file",
                                metrics_port_file, "--log-level", "warn"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = fork();
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("spmvd exited during start-up with status " + std::to_string(status));
    }
    std::ifstream in(port_file);
    if (in >> port_ && port_ > 0) {
      std::ifstream(metrics_port_file) >> metrics_port_;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("spmvd did not start serving within 60 s");
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

int DaemonProcess::stop(int signal) {
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace spmvd::testing
