#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "kernels/device.hpp"

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
