#include "server/memory_trimmer.hpp"

#include <malloc.h>

#include <utility>

namespace spmvd {

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds min_interval,
                             std::function<void()> also_trim)
    : min_interval_(min_interval), also_trim_(std::move(also_trim)), thread_([this] { run(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void MemoryTrimmer::request() noexcept {
  {
    std::lock_guard lock(mutex_);
    pending_ = true;
  }
  wake_.notify_all();
}

std::uint64_t MemoryTrimmer::trims() const noexcept {
  std::lock_guard lock(mutex_);
  return trims_;
}

void MemoryTrimmer::run() {
  auto last_trim = std::chrono::steady_clock::now() - min_interval_;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return pending_ || stopping_; });
    // Requests that arrive while we wait out the interval fold into this one trim.
    wake_.wait_until(lock, last_trim + min_interval_, [&] { return stopping_; });
    if (stopping_) return;
    pending_ = false;
    lock.unlock();
    malloc_trim(0);
    if (also_trim_) also_trim_();
    last_trim = std::chrono::steady_clock::now();
    lock.lock();
    ++trims_;
  }
}

}  // namespace spmvd
