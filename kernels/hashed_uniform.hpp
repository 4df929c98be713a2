#pragma once
// A vector of pseudo-random values in [-1, 1) that is a pure function of (seed, index), written
// once for host and device: nvcc compiles it into CudaDevice's fill kernel
// (kernels/cuda/cuda_device.cu), g++ into CpuDevice's fill and the tests, so both backends
// write the same bits (Device::fill_hashed_uniform). The tuner's timer fills its x with it.

#include <cstdint>

#if defined(__CUDACC__)
#define SPMVD_HASH_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SPMVD_HASH_HOST_DEVICE inline
#endif

namespace spmvd {

// Entry `index` of the hashed vector `seed`: splitmix64's output function (Steele, Lea, Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014) applied to the index's state
// seed + (index + 1) * gamma, its top 53 bits mapped to [-1, 1). Every step is exact in double
// (a 53-bit integer times 2^-52, minus 1, is a multiple of 2^-52 below 1 in magnitude), so the
// host and the device agree bit for bit, fused multiply-add or not; a float entry is this
// double rounded to nearest.
SPMVD_HASH_HOST_DEVICE constexpr double hashed_uniform(std::uint64_t seed,
                                                       std::uint64_t index) noexcept {
  std::uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace spmvd
