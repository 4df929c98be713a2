// Every registered format that runs on the CPU device, against the double-precision reference
// (label `unit`: runs without a GPU). GPU formats: kernels_conformance_gpu_test.cpp.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/format_registry.hpp"
#include "kernels/tests/conformance.hpp"

namespace spmvd {
namespace {

std::vector<std::string> cpu_format_names() {
  std::vector<std::string> names;
  for (const FormatEntry& entry : format_registry().entries())
    if (!entry.rules->needs_gpu()) names.emplace_back(entry.rules->name());
  return names;
}

class CpuFormatConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuFormatConformance, MatchesDoublePrecisionReference) {
  const FormatEntry* entry = format_registry().find(GetParam());
  ASSERT_NE(entry, nullptr);
  const auto device = make_cpu_device();
  testing::check_format_conformance(*entry, *device);
}

INSTANTIATE_TEST_SUITE_P(Registry, CpuFormatConformance, ::testing::ValuesIn(cpu_format_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace spmvd
