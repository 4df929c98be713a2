#pragma once
// Device::fill_hashed_uniform against hashed_uniform on the host, bit for bit: shared by the
// CPU device's test (kernels_unit) and the CUDA device's (kernels_conformance_gpu).

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/hashed_uniform.hpp"

namespace spmvd {

// Empty, shorter than a CUDA block of 256, not a multiple of one, longer than one oneTBB task
// of the CPU device (several tasks).
inline constexpr std::size_t kHashedFillTestCounts[] = {0, 1, 255, 257, 1000, 100'003};

// Fills `count` entries of a buffer one entry longer, poisoned with 0xFF bytes, and expects
// every entry to be hashed_uniform(seed, i) rounded to Value and the entry past the end
// untouched.
template <typename Value>
void expect_fill_is_the_host_hash(Device& device, std::span<const std::size_t> counts) {
  constexpr std::uint64_t seed = 0x5eed;
  for (const std::size_t count : counts) {
    DeviceBuffer buffer(device, (count + 1) * sizeof(Value));
    device.fill_bytes(buffer.data(), 0xFF, buffer.bytes());
    device.fill_hashed_uniform(buffer.data(), count, precision_of<Value>(), seed);
    std::vector<Value> got(count + 1);
    device.copy_to_host(got.data(), buffer.data(), buffer.bytes());
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const auto expected = static_cast<Value>(hashed_uniform(seed, i));
      if (std::memcmp(&got[i], &expected, sizeof(Value)) != 0 && mismatches++ < 5)
        ADD_FAILURE() << "count " << count << ", entry " << i << ": " << got[i] << " != "
                      << expected;
    }
    EXPECT_EQ(mismatches, 0U) << "count " << count;
    Value poison;
    std::memset(&poison, 0xFF, sizeof(Value));
    EXPECT_EQ(std::memcmp(&got[count], &poison, sizeof(Value)), 0)
        << "count " << count << ": wrote past the end";
  }
}

}  // namespace spmvd
