// Built without CUDA there is no compiled GPU kernel to ask (compiled_kernel_resources.cu is
// the CUDA build's implementation).
#include "models/compiled_kernel_resources.hpp"

namespace spmvd {

std::optional<KernelResources> compiled_kernel_resources(CompiledKernel, Precision, int, int) {
  return std::nullopt;
}

}  // namespace spmvd
