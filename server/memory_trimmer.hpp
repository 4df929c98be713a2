#pragma once
// Gives freed heap memory back to the operating system after matrices are released.
//
// Why: glibc keeps freed chunks in its arenas (one per allocating thread, up to 8 per core) and
// returns only the top of each heap by itself. A daemon whose gRPC threads upload, multiply and
// release 100k-200k-row matrices stayed ~1.4 GB above its start after releasing all of them
// (issue 18; docs/OPERATIONS.md "Memory" has the measurement). malloc_trim(0) walks every arena
// and hands free pages back (madvise), so resident memory follows the resident matrices.
//
// Thread safety: request() may be called from any thread; the trim runs on the trimmer's own
// thread, at most once per min_interval, and always after the last request of a burst.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace spmvd {

class MemoryTrimmer {
 public:
  // min_interval bounds the cost: a trim of a large heap takes milliseconds and holds each
  // arena's lock while it walks it.
  // also_trim, where given, runs on the trimmer's thread after each malloc_trim: the device's
  // pool gives back the device memory the released matrices left in it
  // (Device::release_unused_memory).
  explicit MemoryTrimmer(std::chrono::milliseconds min_interval,
                         std::function<void()> also_trim = {});
  ~MemoryTrimmer();  // finishes a pending trim's wait early and joins
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // Asks for a trim; returns at once.
  void request() noexcept;
  // Trims done so far (for metrics and tests).
  std::uint64_t trims() const noexcept;

 private:
  void run();

  const std::chrono::milliseconds min_interval_;
  const std::function<void()> also_trim_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false;
  bool stopping_ = false;
  std::uint64_t trims_ = 0;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace spmvd
