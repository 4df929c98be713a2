#pragma once
// Holds a CUDA stream so that the work issued behind the hold starts only when the host lets it
// go (nvbench's "blocking kernel"). Events recorded around that work then time the GPU alone:
// without the hold, a start event on an idle stream fires at once and the interval also counts
// the host's launch calls, several microseconds for a cuSPARSE SpMV, which is most of an SpMV
// on a cache-resident matrix and varies with the host CPU.
//
// The hold is a one-thread spin kernel that polls a flag in mapped host memory. It gives up
// after kTimeoutNs, so work that waits for the host inside (a synchronous copy; possibly a
// kernel's first, lazily loaded launch: every caller warms up first) is delayed that long and
// then timed as before, host included, instead of hanging; timed_out() says when that happened.

#include <cuda_runtime.h>

#include <cstdint>

namespace spmvd {

class StreamHold {
 public:
  static constexpr std::uint64_t kTimeoutNs = 10'000'000;  // 10 ms; issuing work takes us

  StreamHold();
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  // Enqueues the spin kernel on `stream`; work issued after it waits until release().
  void hold(cudaStream_t stream);
  void release() noexcept;
  // Whether the last hold ended by its timeout; valid once the stream has passed the hold.
  bool timed_out() const noexcept;

 private:
  volatile int* host_flags_ = nullptr;  // [0]: released, [1]: timed out (mapped, pinned)
  int* device_flags_ = nullptr;         // the same two ints as the GPU addresses them
};

}  // namespace spmvd
