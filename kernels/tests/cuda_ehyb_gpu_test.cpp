// cuda_ehyb's kernel paths the registry's candidates do not reach on the conformance matrices
// (label gpu; skips without a CUDA device): the async_copy kernel's persistent blocks walking
// several parts (grid below the part count, so the second buffer and the prefetch of the next
// part are used), and warps taking more than one slice from the part's counter (block smaller
// than the part's slices). A 2-D 5-point grid, randomly renumbered (x and y go through the
// permutation), with a few far entries (an ER part), against the double-precision reference.
// And the partitions a plan stores (issue 16): cuda_ehyb's parts, cuda_bro_ell's RCM and BAR
// orders and cuda_bro_hyb's BAR order offered to the build are the ones it runs.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/build_source.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "kernels/formats/cuda_bro_hyb/cuda_bro_hyb_rules.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_rules.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

CsrMatrix<double> renumbered_grid_with_far_entries(std::int64_t side, std::mt19937_64& rng) {
  const std::int64_t n = side * side;
  std::vector<std::int32_t> to(static_cast<std::size_t>(n));
  std::iota(to.begin(), to.end(), 0);
  std::shuffle(to.begin(), to.end(), rng);
  std::uniform_real_distribution<double> value(-1.0, 1.0), coin(0.0, 1.0);
  std::uniform_int_distribution<std::int32_t> any(0, static_cast<std::int32_t>(n - 1));
  std::vector<std::tuple<std::int32_t, std::int32_t, double>> entries;
  for (std::int64_t i = 0; i < side; ++i)
    for (std::int64_t j = 0; j < side; ++j) {
      const std::int64_t r = i * side + j;
      const auto add = [&](std::int64_t c) { entries.emplace_back(to[r], to[c], value(rng)); };
      if ((r % 53) == 7) continue;  // empty rows
      add(r);
      if (i > 0) add(r - side);
      if (i + 1 < side) add(r + side);
      if (j > 0) add(r - 1);
      if (j + 1 < side) add(r + 1);
      if (coin(rng) < 0.02) entries.emplace_back(to[r], any(rng), value(rng));
    }
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const auto& a, const auto& b) {
                              return std::get<0>(a) == std::get<0>(b) &&
                                     std::get<1>(a) == std::get<1>(b);
                            }),
                entries.end());
  CsrMatrix<double> m{n, n, {0}, {}, {}};
  std::size_t e = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    for (; e < entries.size() && std::get<0>(entries[e]) == r; ++e) {
      m.col_indices.push_back(std::get<1>(entries[e]));
      m.values.push_back(std::get<2>(entries[e]));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// `offered`: a stored partition offered to the build (issue 16), which it must use.
template <typename Value>
void expect_applies_like_reference(const CsrMatrix<double>& m, const Candidate& candidate,
                                   Device& device, std::mt19937_64& rng,
                                   std::shared_ptr<const PlanPartition> offered = nullptr,
                                   const char* format = "cuda_ehyb") {
  const FormatEntry* entry = format_registry().find(format);
  ASSERT_NE(entry, nullptr);
  const BuildSource source(m, device);
  source.offer_partition(offered);
  const auto op = entry->build(source, precision_of<Value>(), candidate);
  if (offered)
    EXPECT_EQ(op->partition(), offered) << "the build computed its own";
  else
    EXPECT_NE(op->partition(), nullptr) << "the plan would carry no partition";
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<Value> x(static_cast<std::size_t>(m.cols)), y0(static_cast<std::size_t>(m.rows));
  for (Value& v : x) v = static_cast<Value>(value(rng));
  for (Value& v : y0) v = static_cast<Value>(value(rng));
  const CsrMatrix<Value> rounded = convert_values<Value>(m);
  const std::vector<double> x_double(x.begin(), x.end());
  const DeviceBuffer x_device = upload(device, x.data(), x.size());
  const std::size_t y_bytes = y0.size() * sizeof(Value);
  DeviceBuffer y_device(device, y_bytes);
  for (const auto& [alpha, beta] : {std::pair{1.5, 0.0}, std::pair{-0.75, 1.25}}) {
    SCOPED_TRACE("alpha " + std::to_string(alpha) + " beta " + std::to_string(beta));
    if (beta == 0.0)
      device.fill_bytes(y_device.data(), 0xFF, y_bytes);  // NaN: y is write-only at beta 0
    else
      device.copy_from_host(y_device.data(), y0.data(), y_bytes);
    op->apply(x_device.data(), y_device.data(), alpha, beta);
    device.synchronize();
    std::vector<Value> y(y0.size());
    device.copy_to_host(y.data(), y_device.data(), y_bytes);
    std::vector<double> expected(y0.begin(), y0.end());
    reference_spmv(rounded, x_double.data(), expected.data(), alpha, beta);
    const double tolerance = sizeof(Value) == 4 ? 1e-5 : 1e-12;
    std::int64_t mismatches = 0;
    for (std::int64_t r = 0; r < m.rows; ++r) {
      double magnitude = std::abs(beta * static_cast<double>(y0[r]));
      for (RowOffset k = rounded.row_offsets[r]; k < rounded.row_offsets[r + 1]; ++k)
        magnitude += std::abs(alpha * static_cast<double>(rounded.values[k]) *
                              x_double[rounded.col_indices[k]]);
      if (!(std::abs(static_cast<double>(y[r]) - expected[r]) <= tolerance * magnitude) &&
          mismatches++ < 5)
        ADD_FAILURE() << "row " << r << ": got " << y[r] << ", expected " << expected[r];
    }
    EXPECT_EQ(mismatches, 0);
  }
}

TEST(CudaEhybGpu, PersistentBlocksAndSliceCountersMatchTheReference) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const std::uint64_t seed = testing::test_seed();
  std::cout << "cuda_ehyb gpu paths: seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const CsrMatrix<double> m = renumbered_grid_with_far_entries(120, rng);  // 14400 rows
  const auto device = make_cuda_device(0);
  // 40 parts of ~360 rows (12 slices). async: grids of 1, 3 and 7 persistent blocks walk 40, 14
  // and 6 parts each; paper: 64 threads (2 warps) take 6 slices each from the part's counter.
  std::vector<Candidate> candidates;
  for (const std::uint32_t grid : {1u, 3u, 7u})
    candidates.push_back(
        Candidate{.format = kCudaEhybFormatId,
                  .params = FieldSet::of(CudaEhybParams{.partitions = 40, .variant = 1}),
                  .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = grid}});
  candidates.push_back(
      Candidate{.format = kCudaEhybFormatId,
                .params = FieldSet::of(CudaEhybParams{.partitions = 40, .variant = 0}),
                .launch = {.block_size = 64, .threads_per_row = 1, .grid_size = 40}});
  for (const Candidate& c : candidates) {
    SCOPED_TRACE("variant " + std::to_string(CudaEhybRules::params_of(c).variant) + " grid " +
                 std::to_string(c.launch.grid_size) + " block " +
                 std::to_string(c.launch.block_size));
    expect_applies_like_reference<double>(m, c, *device, rng);
    expect_applies_like_reference<float>(m, c, *device, rng);
  }
}

// Issue 16: a partition stored with the plan is what the GPU build runs, even one that is not
// what the build would compute (contiguous blocks instead of METIS's cut; the reversed rows
// instead of RCM's or BAR's order): x and y stay in the caller's order, the result is the
// reference's.
TEST(PlanPartitionGpu, StoredPartitionsAreTheOnesTheBuildsRun) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const std::uint64_t seed = testing::test_seed();
  std::cout << "stored partitions on the gpu: seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const CsrMatrix<double> m = renumbered_grid_with_far_entries(120, rng);  // 14400 rows
  const auto device = make_cuda_device(0);
  std::vector<std::int32_t> blocks(static_cast<std::size_t>(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r)
    blocks[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r * 40 / m.rows);
  const auto ehyb_parts =
      std::make_shared<const PlanPartition>(PlanPartition{"metis_kway/40", blocks});
  for (const std::uint32_t variant : {0u, 1u}) {
    const Candidate c{.format = kCudaEhybFormatId,
                      .params = FieldSet::of(CudaEhybParams{.partitions = 40, .variant = variant}),
                      .launch = {.block_size = 128, .threads_per_row = 1, .grid_size = 40}};
    SCOPED_TRACE("cuda_ehyb variant " + std::to_string(variant));
    expect_applies_like_reference<double>(m, c, *device, rng, ehyb_parts);
    expect_applies_like_reference<float>(m, c, *device, rng, ehyb_parts);
    expect_applies_like_reference<double>(m, c, *device, rng);  // computes METIS's
  }
  std::vector<std::int32_t> reversed(static_cast<std::size_t>(m.rows));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const auto rcm = std::make_shared<const PlanPartition>(PlanPartition{"rcm", reversed});
  for (const BroEllChoice& choice : kBroEllChoices) {
    if (choice.params.reorder != kBroReorderRcm) continue;
    const Candidate c{.format = kCudaBroEllFormatId,
                      .params = FieldSet::of(choice.params),
                      .launch = {.block_size = kBroBlockSize,
                                 .threads_per_row = choice.threads_per_row,
                                 .grid_size = 132}};
    SCOPED_TRACE("cuda_bro_ell h " + std::to_string(choice.params.slice_height) + " variant " +
                 std::to_string(choice.params.variant) + " threads " +
                 std::to_string(choice.threads_per_row));
    expect_applies_like_reference<double>(m, c, *device, rng, rcm, "cuda_bro_ell");
    expect_applies_like_reference<float>(m, c, *device, rng, rcm, "cuda_bro_ell");
    expect_applies_like_reference<double>(m, c, *device, rng, nullptr, "cuda_bro_ell");
  }
  // BAR's order (a row order: y scattered back through it), cuda_bro_ell's of whole rows and
  // cuda_bro_hyb's of its ELL part (the first 3 entries of every row; the grid's rows hold up
  // to 6), each offered under its kind (the reversed rows instead of BAR's clustering).
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) longest = std::max(longest, m.row_length(r));
  constexpr std::uint32_t kHybWidth = 3;
  ASSERT_LT(kHybWidth, longest);
  for (const BroEllChoice& choice : kBroEllChoices) {
    if (choice.params.reorder != kBroReorderBar) continue;
    const std::uint32_t h = choice.params.slice_height;
    const LaunchConfig launch{
        .block_size = kBroBlockSize, .threads_per_row = choice.threads_per_row, .grid_size = 132};
    const Candidate ell{
        .format = kCudaBroEllFormatId, .params = FieldSet::of(choice.params), .launch = launch};
    const Candidate hyb{.format = kCudaBroHybFormatId,
                        .params = FieldSet::of(CudaBroHybParams{.ell_width = kHybWidth,
                                                                .slice_height = h,
                                                                .variant = choice.params.variant,
                                                                .reorder = kBroReorderBar,
                                                                .interval_rounds = 8}),
                        .launch = launch};
    const auto ell_bar =
        std::make_shared<const PlanPartition>(PlanPartition{bro_bar_partition_kind(h), reversed});
    const auto hyb_bar = std::make_shared<const PlanPartition>(
        PlanPartition{bro_hyb_bar_partition_kind(h, kHybWidth, longest), reversed});
    SCOPED_TRACE("BAR h " + std::to_string(h) + " variant " +
                 std::to_string(choice.params.variant));
    expect_applies_like_reference<double>(m, ell, *device, rng, ell_bar, "cuda_bro_ell");
    expect_applies_like_reference<float>(m, ell, *device, rng, ell_bar, "cuda_bro_ell");
    expect_applies_like_reference<double>(m, ell, *device, rng, nullptr, "cuda_bro_ell");
    expect_applies_like_reference<double>(m, hyb, *device, rng, hyb_bar, "cuda_bro_hyb");
    expect_applies_like_reference<float>(m, hyb, *device, rng, hyb_bar, "cuda_bro_hyb");
    expect_applies_like_reference<double>(m, hyb, *device, rng, nullptr, "cuda_bro_hyb");
  }
}

}  // namespace
}  // namespace spmvd
