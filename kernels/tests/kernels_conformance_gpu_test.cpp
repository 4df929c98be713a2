// Every registered GPU format on CUDA device 0, against the double-precision reference (label
// `gpu`: skips visibly when no CUDA device is present).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/format_registry.hpp"
#include "kernels/tests/conformance.hpp"

namespace spmvd {
namespace {

std::vector<std::string> gpu_format_names() {
  std::vector<std::string> names;
  for (const FormatEntry& entry : format_registry().entries())
    if (entry.rules->needs_gpu()) names.emplace_back(entry.rules->name());
  return names;
}

class GpuFormatConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  }
};

TEST_P(GpuFormatConformance, MatchesDoublePrecisionReference) {
  const FormatEntry* entry = format_registry().find(GetParam());
  ASSERT_NE(entry, nullptr);
  const auto device = make_cuda_device(0);
  testing::check_format_conformance(*entry, *device);
}

// A build without CUDA registers no GPU format.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuFormatConformance);
INSTANTIATE_TEST_SUITE_P(Registry, GpuFormatConformance, ::testing::ValuesIn(gpu_format_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace spmvd
