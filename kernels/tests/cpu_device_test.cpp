#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/hashed_uniform.hpp"
#include "kernels/tests/hashed_fill_check.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CpuDevice, DescribesTheHostAsACpu) {
  const auto device = make_cpu_device();
  const DeviceInfo& info = device->info();
  EXPECT_FALSE(info.is_gpu);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.sm_count, 1);
  EXPECT_GT(info.memory_bytes, 0U);
  EXPECT_EQ(device->native_stream(), nullptr);
  EXPECT_EQ(info.signature().rfind("cpu|", 0), 0U);
}

TEST(CpuDevice, CopiesFillsAndAlignsBuffers) {
  const auto device = make_cpu_device();
  const std::vector<std::int32_t> host{1, 2, 3, 4};
  const DeviceBuffer a = upload(*device, host.data(), host.size());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0U);
  DeviceBuffer b(*device, 4 * sizeof(std::int32_t));
  device->fill_bytes(b.data(), 0xFF, b.bytes());
  device->copy_on_device(b.data(), a.data(), 2 * sizeof(std::int32_t));
  std::vector<std::int32_t> back(4);
  device->copy_to_host(back.data(), b.data(), b.bytes());
  EXPECT_THAT(back, ElementsAre(1, 2, -1, -1));
}

// splitmix64 seeded with 0 outputs 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f
// (Steele, Lea, Flood 2014; Vigna's splitmix64.c): entry i is output i's top 53 bits in [-1, 1).
TEST(HashedUniform, IsSplitmix64sOutputMappedToMinusOneToOne) {
  const std::uint64_t outputs[] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL,
                                   0x06c45d188009454fULL};
  for (std::uint64_t i = 0; i < 3; ++i)
    EXPECT_EQ(hashed_uniform(0, i), static_cast<double>(outputs[i] >> 11) * 0x1.0p-52 - 1.0)
        << "entry " << i;
  static_assert(hashed_uniform(0, 0) == static_cast<double>(0xe220a8397b1dcdafULL >> 11) *
                                                0x1.0p-52 - 1.0);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const double v = hashed_uniform(0x5eed, i);
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
  EXPECT_NE(hashed_uniform(1, 0), hashed_uniform(0, 0));  // the seed matters
}

TEST(CpuDevice, FillsTheHashedUniformVectorBitForBitInDouble) {
  const auto device = make_cpu_device();
  expect_fill_is_the_host_hash<double>(*device, kHashedFillTestCounts);
}

TEST(CpuDevice, FillsTheHashedUniformVectorBitForBitInFloat) {
  const auto device = make_cpu_device();
  expect_fill_is_the_host_hash<float>(*device, kHashedFillTestCounts);
}

TEST(DeviceBuffer, CarvesRegionsAtTheDeviceAlignment) {
  EXPECT_EQ(round_up_to_device_alignment(0), 0U);
  EXPECT_EQ(round_up_to_device_alignment(1), 256U);
  EXPECT_EQ(round_up_to_device_alignment(256), 256U);
  EXPECT_EQ(round_up_to_device_alignment(257), 512U);
  const auto device = make_cpu_device();
  const DeviceBuffer buffer(*device, 3 * 256);
  EXPECT_EQ(buffer.data_at(0), buffer.data());
  EXPECT_EQ(static_cast<unsigned char*>(buffer.data_at(512)) -
                static_cast<unsigned char*>(buffer.data()),
            512);
  EXPECT_EQ(DeviceBuffer().data_at(512), nullptr);
}

TEST(CpuDevice, TimesTheWorkItRuns) {
  const auto device = make_cpu_device();
  int runs = 0;
  const double ms = device->time_ms([&] { ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_GE(ms, 0.0);
}

TEST(CpuDevice, RefusesAnImpossibleAllocationAsResourceExhausted) {
  const auto device = make_cpu_device();
  try {
    device->allocate(std::size_t{1} << 62);
    FAIL() << "allocated 2^62 bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::resource_exhausted);
    EXPECT_THAT(e.what(), HasSubstr("cannot allocate 4611686018427387904 bytes"));
  }
}

TEST(CudaDeviceFactory, RefusesAnOrdinalThatIsNotThere) {
  const int count = cuda_device_count();
  EXPECT_GE(count, 0);
  try {
    make_cuda_device(count);
    FAIL() << "opened CUDA device " << count << " of " << count;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_THAT(e.what(), HasSubstr("cannot open CUDA device " + std::to_string(count)));
  }
}

}  // namespace
}  // namespace spmvd
