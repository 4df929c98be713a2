#include "core/device_info.hpp"

#include <string>

namespace spmvd {

std::string DeviceInfo::signature() const {
  using std::to_string;
  if (!is_gpu) return "cpu|" + name + "|threads" + to_string(sm_count);
  return "gpu|" + name + "|cc" + to_string(compute_capability_major) + "." +
         to_string(compute_capability_minor) + "|sm" + to_string(sm_count) + "|mem" +
         to_string(memory_bytes >> 20) + "MiB|driver" + to_string(driver_version) + "|cuda" +
         to_string(runtime_version) + "|cusparse" + to_string(cusparse_version) +
         (host.empty() ? "" : "|host " + host);
}

}  // namespace spmvd
