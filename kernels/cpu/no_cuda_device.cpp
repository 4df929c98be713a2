// The CUDA entry points of kernels/device.hpp in a build without CUDA (SPMVD_WITH_CUDA=OFF):
// no GPU is ever visible, so callers fall back to the CPU device.

#include "core/error.hpp"
#include "kernels/device.hpp"

namespace spmvd {

int cuda_device_count() noexcept { return 0; }

std::unique_ptr<Device> make_cuda_device(int ordinal) {
  throw Error(ErrorCode::failed_precondition,
              "cannot open CUDA device " + std::to_string(ordinal) + ": built without CUDA");
}

}  // namespace spmvd
