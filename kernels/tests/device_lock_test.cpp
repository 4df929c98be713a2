#include "kernels/device_lock.hpp"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <stdexcept>

namespace spmvd {
namespace {

// A build's lock on a plain mutex, counting how often it was given up.
class CountingLock final : public DeviceLockHolder {
 public:
  explicit CountingLock(std::mutex& mutex) : lock_(mutex) {}
  void release() override {
    ++releases;
    lock_.unlock();
  }
  void reacquire() override { lock_.lock(); }
  bool owns() const { return lock_.owns_lock(); }
  int releases = 0;

 private:
  std::unique_lock<std::mutex> lock_;
};

// Whether another thread (a multiply) could take the mutex now.
bool another_thread_can_lock(std::mutex& mutex) {
  return std::async(std::launch::async, [&] {
           if (!mutex.try_lock()) return false;
           mutex.unlock();
           return true;
         }).get();
}

TEST(WithoutDeviceLock, ReleasesTheBuildsLockForTheHostWorkAndTakesItBack) {
  std::mutex device;
  CountingLock lock(device);
  const HeldForBuild held(lock);
  ASSERT_FALSE(another_thread_can_lock(device));
  const int result = without_device_lock([&] {
    EXPECT_TRUE(another_thread_can_lock(device)) << "the host phase still holds the lock";
    return 42;
  });
  EXPECT_EQ(result, 42);
  EXPECT_EQ(lock.releases, 1);
  EXPECT_TRUE(lock.owns());
  EXPECT_FALSE(another_thread_can_lock(device)) << "the device phase after it runs unlocked";
}

TEST(WithoutDeviceLock, TakesTheLockBackWhenTheHostWorkThrows) {
  std::mutex device;
  CountingLock lock(device);
  const HeldForBuild held(lock);
  EXPECT_THROW(without_device_lock([]() -> int { throw std::runtime_error("bad layout"); }),
               std::runtime_error);
  EXPECT_TRUE(lock.owns());
  EXPECT_FALSE(another_thread_can_lock(device));
  // Still registered: the next host phase releases it again.
  without_device_lock([&] { EXPECT_TRUE(another_thread_can_lock(device)); });
  EXPECT_EQ(lock.releases, 2);
}

TEST(WithoutDeviceLock, NestedHostWorkReleasesOnce) {
  std::mutex device;
  CountingLock lock(device);
  const HeldForBuild held(lock);
  without_device_lock([&] {
    without_device_lock([&] { EXPECT_TRUE(another_thread_can_lock(device)); });
  });
  EXPECT_EQ(lock.releases, 1);
  EXPECT_TRUE(lock.owns());
}

TEST(WithoutDeviceLock, RunsTheWorkAsItIsWithoutABuildLockOnThisThread) {
  std::mutex device;
  CountingLock lock(device);
  {
    const HeldForBuild held(lock);
  }  // its scope ended: nothing is registered any more
  EXPECT_EQ(without_device_lock([] { return 7; }), 7);
  EXPECT_EQ(lock.releases, 0);
  EXPECT_TRUE(lock.owns());
  // Another thread's registration is its own.
  std::mutex other;
  CountingLock other_lock(other);
  const HeldForBuild held(other_lock);
  std::async(std::launch::async, [] { without_device_lock([] {}); }).get();
  EXPECT_EQ(other_lock.releases, 0);
}

}  // namespace
}  // namespace spmvd
