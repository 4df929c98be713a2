// CudaDevice on CUDA device 0 (label `gpu`: skips visibly when no CUDA device is present).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "kernels/device.hpp"
#include "kernels/tests/hashed_fill_check.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CudaDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    device_ = make_cuda_device(0);
  }
  std::unique_ptr<Device> device_;
};

TEST_F(CudaDevice, DescribesTheGpuFromItsProperties) {
  const DeviceInfo& info = device_->info();
  std::cout << "device signature: " << info.signature() << ", L2 " << info.l2_bytes
            << " B, max threads/SM " << info.max_threads_per_sm << ", max blocks/SM "
            << info.max_blocks_per_sm << ", registers/SM " << info.registers_per_sm
            << ", shared memory/SM " << info.shared_memory_per_sm_bytes << " B\n";
  EXPECT_TRUE(info.is_gpu);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.compute_capability_major, 7);
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.memory_bytes, 0U);
  EXPECT_GT(info.l2_bytes, 0U);
  EXPECT_EQ(info.warp_size, 32);
  EXPECT_GT(info.max_threads_per_sm, 0);
  EXPECT_GT(info.max_blocks_per_sm, 0);
  EXPECT_GT(info.registers_per_sm, 0);
  EXPECT_GT(info.shared_memory_per_sm_bytes, 0U);
  EXPECT_GT(info.driver_version, 0);
  EXPECT_GT(info.runtime_version, 0);
  EXPECT_GT(info.cusparse_version, 0);
  EXPECT_NE(device_->native_stream(), nullptr);
}

TEST_F(CudaDevice, CopiesAndFillsOnItsStream) {
  const std::vector<std::int32_t> host{1, 2, 3, 4};
  const DeviceBuffer a = upload(*device_, host.data(), host.size());
  DeviceBuffer b(*device_, 4 * sizeof(std::int32_t));
  device_->fill_bytes(b.data(), 0xFF, b.bytes());
  device_->copy_on_device(b.data(), a.data(), 2 * sizeof(std::int32_t));
  std::vector<std::int32_t> back(4);
  device_->copy_to_host(back.data(), b.data(), b.bytes());
  EXPECT_THAT(back, ElementsAre(1, 2, -1, -1));
}

// The fill kernel against hashed_uniform on the host, bit for bit (the tuner's timer fills its x
// with it on either backend), at the shared sizes and past one grid of 2^16 blocks of 256
// threads (the kernel's grid-stride loop).
TEST_F(CudaDevice, CopiesLargeBuffersThroughThePinnedChunksExactly) {
  // Above PinnedStaging::kMinBytes copies go through two pinned chunks: sizes of one chunk
  // and a few bytes, several chunks and an odd tail, each byte distinct enough that a chunk
  // written to the wrong offset or a stale chunk shows.
  for (const std::size_t bytes : {std::size_t{2} << 20, (std::size_t{8} << 20) + 3,
                                  (std::size_t{37} << 20) + 4097}) {
    std::vector<unsigned char> host(bytes);
    for (std::size_t i = 0; i < bytes; ++i)
      host[i] = static_cast<unsigned char>((i * 2654435761U) >> 13);
    DeviceBuffer buffer(*device_, bytes);
    device_->copy_from_host(buffer.data(), host.data(), bytes);
    // On the device: a second buffer copied on the stream, so the check also covers ordering.
    DeviceBuffer copy(*device_, bytes);
    device_->copy_on_device(copy.data(), buffer.data(), bytes);
    std::vector<unsigned char> back(bytes, 0xA5);
    device_->copy_to_host(back.data(), copy.data(), bytes);
    EXPECT_TRUE(back == host) << bytes << " bytes: first difference at byte "
                              << (std::mismatch(back.begin(), back.end(), host.begin()).first -
                                  back.begin());
  }
}

TEST_F(CudaDevice, FillsTheHashedUniformVectorAsTheHostHashesIt) {
  const std::size_t past_one_grid[] = {(std::size_t{1} << 24) + 3};
  expect_fill_is_the_host_hash<double>(*device_, kHashedFillTestCounts);
  expect_fill_is_the_host_hash<float>(*device_, kHashedFillTestCounts);
  expect_fill_is_the_host_hash<double>(*device_, past_one_grid);
  expect_fill_is_the_host_hash<float>(*device_, past_one_grid);
}

TEST_F(CudaDevice, TimesWorkWithEvents) {
  DeviceBuffer b(*device_, std::size_t{64} << 20);
  const double ms = device_->time_ms([&] { device_->fill_bytes(b.data(), 0, b.bytes()); });
  EXPECT_GT(ms, 0.0);
}

TEST_F(CudaDevice, TimesTheGpuNotTheHostIssuingTheWork) {
  DeviceBuffer b(*device_, 4096);
  const auto fill = [&] { device_->fill_bytes(b.data(), 0, b.bytes()); };
  device_->time_ms(fill);
  // The stream is held while the host sleeps, so the events see only the 4 KiB fill.
  const double ms = device_->time_ms([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    fill();
  });
  std::cout << "a 4 KiB fill issued after a 3 ms host sleep timed " << ms * 1e3 << " us\n";
  EXPECT_GT(ms, 0.0);
  EXPECT_LT(ms, 0.5) << "the host's sleep was timed";
}

TEST_F(CudaDevice, TimesWorkThatWaitsForTheHostOnceTheHoldGivesUp) {
  DeviceBuffer b(*device_, 4096);
  const auto fill = [&] { device_->fill_bytes(b.data(), 0, b.bytes()); };
  // synchronize() inside the timed work waits for the held stream: the hold times out
  // instead of hanging, and the device times normally afterwards.
  const double waited_ms = device_->time_ms([&] {
    fill();
    device_->synchronize();
  });
  EXPECT_GT(waited_ms, 0.0);
  const double ms = device_->time_ms([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    fill();
  });
  EXPECT_LT(ms, 0.5) << "the stream hold did not recover after a timeout";
}

TEST_F(CudaDevice, ReportsOutOfMemoryAsResourceExhaustedNamingTheBytes) {
  const std::uint64_t too_much = device_->info().memory_bytes * 2;
  try {
    device_->allocate(too_much);
    FAIL() << "allocated twice the device memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::resource_exhausted);
    EXPECT_THAT(e.what(), HasSubstr("cannot allocate " + std::to_string(too_much) + " bytes"));
  }
  DeviceBuffer still_works(*device_, 1024);  // the failure left the device usable
  EXPECT_NE(still_works.data(), nullptr);
}

// Freed memory stays in the device's pool for the next allocation; a request the pool's pieces
// cannot hold gets that memory back: 40 % of the device freed, then 70 % asked for, fits only
// if the pool gives its 40 % back.
TEST_F(CudaDevice, MemoryFreedToThePoolIsGivenBackWhenALargerRequestNeedsIt) {
  const std::uint64_t memory = device_->info().memory_bytes;
  {
    DeviceBuffer first(*device_, memory / 10 * 4);
    device_->fill_bytes(first.data(), 0x5a, first.bytes());
    device_->synchronize();
  }
  {
    DeviceBuffer again(*device_, memory / 10 * 4);  // the freed block, reused
    EXPECT_NE(again.data(), nullptr);
  }
  DeviceBuffer larger(*device_, memory / 10 * 7);
  device_->fill_bytes(larger.data(), 0xa5, larger.bytes());
  device_->synchronize();
  std::uint8_t last = 0;
  device_->copy_to_host(&last, static_cast<std::uint8_t*>(larger.data()) + larger.bytes() - 1, 1);
  EXPECT_EQ(last, 0xa5);
}

}  // namespace
}  // namespace spmvd
