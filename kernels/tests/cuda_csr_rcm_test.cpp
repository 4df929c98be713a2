// cuda_csr_rcm's rules and host half (label unit, no GPU needed): where it is offered, what it
// stores, how it is predicted, and that P A P^T with x gathered into RCM order and y written
// through the order is A x in the caller's order. Its kernels run in kernels_conformance_gpu.

#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench/generators.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "kernels/formats/cuda_csr_rcm/cuda_csr_rcm_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/tests/conformance.hpp"
#include "kernels/tests/hand_written.hpp"
#include "kernels/tests/test_matrices.hpp"
#include "partition/rcm_order.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

CsrMatrix<double> band(std::int64_t rows) {
  return generate_matrix("banded:rows=" + std::to_string(rows) + ",bandwidth=3");
}

std::vector<double> multiply(const CsrMatrix<double>& m, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      y[r] += m.values[k] * x[m.col_indices[k]];
  return y;
}

// A renumbered band gathers at random and RCM gives it its band back: offered from a thorough
// pass (every cuda_csr_vector launch, under this format's id), not from a standard one (RCM not
// sized), and not for the band in its own order (nothing to win).
TEST(CudaCsrRcmRules, IsOfferedWhereRcmWasSizedAndSavesGathers) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "seed " << seed << " (SPMVD_TEST_SEED)\n";
  const CsrMatrix<double> renumbered = renumber_symmetric(band(3000), seed);
  const CudaCsrRcmRules rules;
  const DeviceInfo gpu = testing::h100();

  const MatrixFeatures standard = extract_features(renumbered);
  EXPECT_FALSE(csr_rcm_moves_fewer_bytes(standard));
  EXPECT_TRUE(rules.candidates(standard, gpu).empty());
  EXPECT_FALSE(rules.admissible(standard, gpu, Precision::fp64, ~std::uint64_t{0}));

  const MatrixFeatures thorough =
      extract_features(renumbered, format_registry(), FeatureEffort::thorough);
  const std::optional<BroEllFeatures> rcm = cuda_bro_ell_features(thorough);
  ASSERT_TRUE(rcm.has_value());
  ASSERT_EQ(rcm->rcm_sized, 1);
  std::cout << "x sectors per non-zero " << thorough.x_sectors_per_nonzero << " -> "
            << rcm->rcm_sectors_per_nonzero << "\n";
  EXPECT_TRUE(csr_rcm_moves_fewer_bytes(thorough));
  const std::vector<Candidate> offered = rules.candidates(thorough, gpu);
  std::vector<Candidate> vector_launches = CudaCsrVectorRules{}.candidates(thorough, gpu);
  ASSERT_EQ(offered.size(), vector_launches.size());
  for (std::size_t i = 0; i < offered.size(); ++i) {
    EXPECT_EQ(offered[i].format, kCudaCsrRcmFormatId);
    EXPECT_EQ(offered[i].launch, vector_launches[i].launch);
    EXPECT_TRUE(rules.is_valid(offered[i], thorough, gpu));
  }
  EXPECT_TRUE(rules.admissible(thorough, gpu, Precision::fp64, ~std::uint64_t{0}));
  EXPECT_FALSE(rules.admissible(thorough, gpu, Precision::fp64, 1000));
  EXPECT_FALSE(rules.admissible(thorough, DeviceInfo{}, Precision::fp64, ~std::uint64_t{0}));
  EXPECT_EQ(rules.gather_sectors_per_nonzero(thorough, offered.front()),
            rcm->rcm_sectors_per_nonzero);

  // The band in its own order: RCM sized or not, its gathers are as local as RCM's already.
  const MatrixFeatures in_order =
      extract_features(band(3000), format_registry(), FeatureEffort::thorough);
  EXPECT_FALSE(csr_rcm_moves_fewer_bytes(in_order));
  EXPECT_TRUE(rules.candidates(in_order, gpu).empty());
}

// What the builder allocates, and the three launches the models price: x's gather as a
// one-entry-a-row random-column SpMV (cuda_csr_scalar) over every column, the CSR vector kernel
// at RCM's x sectors, and y's gather over every row.
TEST(CudaCsrRcmRules, StoresTheRenumberedCsrTheOrdersAndVectorsAndIsPredictedAsItsThreeLaunches) {
  const CsrMatrix<double> renumbered = renumber_symmetric(band(2000), 7);
  const MatrixFeatures features =
      extract_features(renumbered, format_registry(), FeatureEffort::thorough);
  const CudaCsrRcmRules rules;
  const std::vector<Candidate> offered = rules.candidates(features, testing::h100());
  ASSERT_FALSE(offered.empty());
  const Candidate& c = offered.front();
  const std::uint64_t n = 2000;
  const auto nnz = static_cast<std::uint64_t>(renumbered.nnz());
  EXPECT_EQ(rules.device_bytes(features, Precision::fp64, c),
            (n + 1) * 8 + nnz * (4 + 8) + 2 * n * (4 + 8));
  EXPECT_EQ(rules.device_bytes(features, Precision::fp32, c),
            (n + 1) * 8 + nnz * (4 + 4) + 2 * n * (4 + 4));

  const std::vector<FormatPart> parts = rules.parts(features, c);
  ASSERT_EQ(parts.size(), 3U);
  for (const std::size_t gather : {0, 2}) {
    EXPECT_EQ(parts[gather].candidate.format, kCudaCsrScalarFormatId);
    EXPECT_EQ(parts[gather].features.rows, 2000);
    EXPECT_EQ(parts[gather].features.nnz, 2000);
    EXPECT_EQ(parts[gather].features.x_sectors_per_nonzero, 1.0);
  }
  const FormatPart& kernel = parts[1];
  EXPECT_EQ(kernel.candidate.format, kCudaCsrVectorFormatId);
  EXPECT_EQ(kernel.candidate.launch, c.launch);
  EXPECT_EQ(kernel.features.nnz, features.nnz);
  EXPECT_EQ(kernel.features.distribution, features.distribution);
  EXPECT_EQ(kernel.features.x_sectors_per_nonzero,
            cuda_bro_ell_features(features)->rcm_sectors_per_nonzero);
  EXPECT_LT(kernel.features.x_sectors_per_nonzero, features.x_sectors_per_nonzero / 4);
  EXPECT_EQ(kernel.row_map_bytes, 0U);
  EXPECT_EQ(kernel.scattered_row_runs, 0);
  for (const FormatPart& part : parts) EXPECT_EQ(part.runs, FormatPart::Runs::gpu);

  // Without RCM sized there is nothing to price.
  EXPECT_THROW(rules.parts(extract_features(renumbered), c), Error);
}

// The host half of a build: RCM's order (the one a stored plan offers, when it does), its
// inverse and P A P^T; the multiply the kernels make of them, x gathered into the order and y
// gathered back through the inverse, is A x.
TEST(CudaCsrRcmRules, TheRenumberedMatrixThroughItsOrderIsTheCallersMultiply) {
  const std::uint64_t seed = testing::test_seed();
  const CsrMatrix<double> m = renumber_symmetric(band(1500), seed);
  const auto device = make_cpu_device();
  const BuildSource source(m, *device);
  const RcmRenumbered built = rcm_renumbered(source);
  ASSERT_NE(built.order, nullptr);
  EXPECT_EQ(built.order->kind, "rcm");
  EXPECT_EQ(built.order->entries, rcm_order(m));

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  const std::vector<std::int32_t>& order = built.order->entries;
  std::vector<double> x_perm(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x_perm[i] = x[order[i]];
  const std::vector<double> y_perm = multiply(built.matrix, x_perm);
  std::vector<double> y(y_perm.size());
  for (std::size_t j = 0; j < y.size(); ++j) y[j] = y_perm[built.inverse[j]];
  const std::vector<double> expected = multiply(m, x);
  for (std::size_t r = 0; r < y.size(); ++r) EXPECT_NEAR(y[r], expected[r], 1e-12) << "row " << r;

  // A plan-cache hit offers its stored order (here deliberately not RCM's): it is used, not
  // computed again.
  std::vector<std::int32_t> reversed(order.rbegin(), order.rend());
  const BuildSource hit(m, *device);
  hit.offer_partition(
      std::make_shared<const PlanPartition>(PlanPartition{.kind = "rcm", .entries = reversed}));
  EXPECT_EQ(rcm_renumbered(hit).order->entries, reversed);
}

}  // namespace
}  // namespace spmvd
