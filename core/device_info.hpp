#pragma once
// What a decision needs to know about the device it runs on. A plain value: tests build it by
// hand (STYLE.md: DeviceInfo{.sm_count = 132, ...}); only kernels/ reads it off hardware.

#include <cstdint>
#include <string>

namespace spmvd {

struct DeviceInfo {
  bool is_gpu = false;
  std::string name;  // "NVIDIA H100 80GB HBM3", or the CPU model for the CPU backend
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;  // streaming multiprocessors; for the CPU backend, hardware threads
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int registers_per_sm = 0;
  std::uint64_t shared_memory_per_sm_bytes = 0;
  int driver_version = 0;    // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;   // cudaRuntimeGetVersion
  int cusparse_version = 0;  // cusparseGetVersion
  // A GPU's host: its CPU model and hardware threads ("<model name> x<threads>"). A calibration
  // times the host too (the CPU–GPU split's host part, the host-device copies), so the same GPU
  // on another host is another device. Empty where unknown (a DeviceInfo built by hand).
  std::string host{};

  // The plan-cache key part naming this device: GPU model, compute capability, SM count,
  // memory, driver, CUDA and cuSPARSE versions and the host (ARCHITECTURE.md "Plans and the
  // cache"); the CPU model and threads for the CPU backend.
  std::string signature() const;
};

}  // namespace spmvd
