#pragma once
// Starts the real spmvd as a child process on a free loopback port and stops it with a signal.

#include <sys/types.h>

#include <string>
#include <vector>

namespace spmvd::testing {

class DaemonProcess {
 public:
  // Starts `binary` with --listen 127.0.0.1:0 --port-file ... --metrics-listen 127.0.0.1:0
  // (so that daemons started in parallel never collide) plus extra_args, and waits until the
  // port file appears (the daemon is serving). Throws std::runtime_error if it exits first.
  DaemonProcess(const std::string& binary, const std::string& work_dir,
                std::vector<std::string> extra_args);
  ~DaemonProcess();  // SIGKILL if still running

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }  // 0 when extra_args disabled metrics
  pid_t pid() const { return pid_; }
  // Sends `signal` and waits for the exit; returns the exit status (or 128 + signal).
  int stop(int signal);

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int metrics_port_ = 0;
};

}  // namespace spmvd::testing
