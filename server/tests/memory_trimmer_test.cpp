#include "server/memory_trimmer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace spmvd {
namespace {

// Waits up to five seconds (a loaded CI machine) for `trims` to reach `expected`.
bool reaches(const MemoryTrimmer& trimmer, std::uint64_t expected) {
  for (int i = 0; i < 1000 && trimmer.trims() < expected; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return trimmer.trims() >= expected;
}

TEST(MemoryTrimmer, TrimsOnlyWhenAsked) {
  MemoryTrimmer trimmer(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(trimmer.trims(), 0u);
  trimmer.request();
  EXPECT_TRUE(reaches(trimmer, 1));
}

TEST(MemoryTrimmer, RunsWhatElseItIsGivenWithEachTrim) {
  std::atomic<int> device_trims{0};
  MemoryTrimmer trimmer(std::chrono::milliseconds(1), [&] { ++device_trims; });
  trimmer.request();
  ASSERT_TRUE(reaches(trimmer, 1));
  EXPECT_EQ(device_trims.load(), 1);
  trimmer.request();
  ASSERT_TRUE(reaches(trimmer, 2));
  EXPECT_EQ(device_trims.load(), 2);
}

TEST(MemoryTrimmer, ABurstOfRequestsFoldsIntoFewTrimsAndTheLastIsServed) {
  MemoryTrimmer trimmer(std::chrono::milliseconds(500));
  trimmer.request();
  ASSERT_TRUE(reaches(trimmer, 1));
  for (int i = 0; i < 100; ++i) trimmer.request();  // inside the interval: one more trim, later
  EXPECT_EQ(trimmer.trims(), 1u);
  EXPECT_TRUE(reaches(trimmer, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_EQ(trimmer.trims(), 2u) << "no request since: no trim";
}

TEST(MemoryTrimmer, DestructionDoesNotWaitOutTheInterval) {
  const auto start = std::chrono::steady_clock::now();
  {
    MemoryTrimmer trimmer(std::chrono::hours(1));
    trimmer.request();
    trimmer.request();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace spmvd
