// What the kernel warm-up before serving (server/kernel_warm_up.hpp) launches, enumerated on
// this host for an H100-like device (no GPU needed): every format a GPU runs offers the warm-up
// matrices candidates in both precisions, so each one's kernels load before the first request;
// on the CPU backend nothing runs.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "models/tests/test_device.hpp"
#include "server/kernel_warm_up.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

TEST(KernelWarmUp, EveryGpuFormatOffersTheWarmUpMatricesCandidatesInBothPrecisions) {
  const DeviceInfo gpu = testing_support::h100_like();
  std::vector<MatrixFeatures> features;
  for (const CsrMatrix<double>& m : warm_up_matrices())
    features.push_back(extract_features(m, format_registry(), FeatureEffort::thorough));
  for (const Precision precision : {Precision::fp32, Precision::fp64}) {
    std::set<std::string> offered;
    for (const MatrixFeatures& f : features) {
      for (const WarmUpCandidate& c : warm_up_candidates(format_registry(), f, gpu, precision)) {
        ASSERT_NE(c.entry, nullptr);
        EXPECT_EQ(c.candidate.format, c.entry->rules->id());
        offered.insert(std::string(c.entry->rules->name()));
      }
    }
    // The formats a GPU does not run (the host's CSR and COO) aside, every registered one.
    for (const FormatEntry& entry : format_registry().entries()) {
      const std::string name(entry.rules->name());
      if (name == "cpu_csr" || name == "cpu_coo") continue;
      EXPECT_TRUE(offered.contains(name)) << name << " in " << to_string(precision);
    }
  }
}

TEST(KernelWarmUp, RunsNothingOnTheCpuBackend) {
  const auto device = make_cpu_device();
  const KernelWarmUp done = warm_up_kernels(format_registry(), *device);
  EXPECT_EQ(done.candidates, 0u);
  EXPECT_EQ(done.failed, 0u);
}

}  // namespace
}  // namespace spmvd
