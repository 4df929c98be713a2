// The kernel warm-up before serving (server/kernel_warm_up.hpp) on CUDA device 0: every
// admissible format's every candidate built and applied once in both precisions, none failing,
// and the formats of the registry all among them (label gpu: skips visibly without a CUDA
// device).

#include <gtest/gtest.h>

#include <iostream>

#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "server/kernel_warm_up.hpp"

namespace spmvd {
namespace {

TEST(KernelWarmUp, BuildsAndAppliesEveryCandidateOnTheGpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const KernelWarmUp done = warm_up_kernels(format_registry(), *device);
  std::cout << "warm-up: " << done.candidates << " candidates, " << done.failed << " failed, "
            << done.ms << " ms\n";
  EXPECT_EQ(done.failed, 0u);
  // Each GPU format offers this matrix a candidate or more in each of the two precisions.
  EXPECT_GE(done.candidates, format_registry().entries().size());
}

}  // namespace
}  // namespace spmvd
