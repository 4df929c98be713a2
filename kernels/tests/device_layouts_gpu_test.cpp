// The layouts built on CUDA device 0 from the build source's device CSR (issue 17 "build once":
// common/device_sell.hpp, cuda_hyb/device_hyb_layout.hpp), copied back and compared element by
// element with the host layouts they replace (make_sell_layout, make_ell_layout,
// make_hyb_layout) on the conformance matrices, in both precisions; and the sharing of one build
// between candidates that differ only in launch parameters (label `gpu`: skips visibly without a
// CUDA device).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/common/device_sell.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_ell/ell_layout.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_hyb/device_hyb_layout.hpp"
#include "kernels/formats/cuda_hyb/hyb_layout.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"
#include "kernels/tests/test_matrices.hpp"

namespace spmvd {
namespace {

#if SPMVD_WITH_CUDA  // the device builders are CUDA code: a build without CUDA has none

template <typename T>
std::vector<T> download(Device& device, const DeviceBuffer& buffer) {
  std::vector<T> host(buffer.bytes() / sizeof(T));
  EXPECT_EQ(host.size() * sizeof(T), buffer.bytes()) << "buffer is not a whole array";
  if (!host.empty()) device.copy_to_host(host.data(), buffer.data(), buffer.bytes());
  return host;
}

// One failure naming the array, its first differing index and how many differ (not the whole
// arrays, which run to tens of thousands of slots).
template <typename T>
void expect_same_array(const std::string& name, const std::vector<T>& got,
                       const std::vector<T>& expected) {
  if (got.size() != expected.size()) {
    ADD_FAILURE() << name << ": " << got.size() << " elements on the device, " << expected.size()
                  << " on the host";
    return;
  }
  std::size_t differing = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == expected[i]) && differing++ == 0) first = i;
  if (differing != 0)
    ADD_FAILURE() << name << ": " << differing << " of " << got.size()
                  << " elements differ, first at " << first << ": device " << got[first]
                  << ", host " << expected[first];
}

template <typename Value>
void expect_sell_equals_host(Device& device, const BuildSource& source,
                             const SellLayout<Value>& host, std::int64_t slice_height,
                             std::int64_t sort_window) {
  SCOPED_TRACE("C=" + std::to_string(slice_height) + " sigma=" + std::to_string(sort_window));
  const auto built =
      make_device_sell_layout(source, precision_of<Value>(), slice_height, sort_window);
  ASSERT_NE(built, nullptr);
  EXPECT_EQ(built->rows, host.rows);
  EXPECT_EQ(built->slice_height, host.slice_height);
  EXPECT_EQ(built->precision, precision_of<Value>());
  EXPECT_EQ(built->slots(), host.slots());
  expect_same_array("host slice offsets", built->host_slice_offsets, host.slice_offsets);
  expect_same_array("slice offsets", download<std::int64_t>(device, built->slice_offsets),
                    host.slice_offsets);
  expect_same_array("column indices", download<ColIndex>(device, built->col_indices),
                    host.col_indices);
  expect_same_array("values", download<Value>(device, built->values), host.values);
  expect_same_array("permutation", download<std::int32_t>(device, built->permutation),
                    host.permutation);
}

template <typename Value>
void expect_hyb_equals_host(Device& device, const BuildSource& source, std::int64_t ell_width) {
  SCOPED_TRACE("K=" + std::to_string(ell_width));
  const HybLayout<Value> host = make_hyb_layout<Value>(source.host(), ell_width);
  const auto built = make_device_hyb_layout(source, precision_of<Value>(), ell_width);
  ASSERT_NE(built, nullptr);
  EXPECT_EQ(built->rows, host.rows);
  EXPECT_EQ(built->ell_width, host.ell_width);
  EXPECT_EQ(built->coo_nnz, static_cast<std::int64_t>(host.coo.values.size()));
  expect_same_array("ELL column indices", download<ColIndex>(device, built->ell_col_indices),
                    host.ell_col_indices);
  expect_same_array("ELL values", download<Value>(device, built->ell_values), host.ell_values);
  expect_same_array("COO row indices", download<std::int32_t>(device, built->coo_row_indices),
                    host.coo.row_indices);
  expect_same_array("COO column indices", download<ColIndex>(device, built->coo_col_indices),
                    host.coo.col_indices);
  expect_same_array("COO values", download<Value>(device, built->coo_values), host.coo.values);
}

std::int64_t longest_row_serially(const CsrMatrix<double>& m) {
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) longest = std::max(longest, m.row_length(r));
  return longest;
}

template <typename Value>
void expect_layouts_equal_host(Device& device, const CsrMatrix<double>& matrix) {
  const BuildSource source(matrix, device);
  const std::int64_t rows = matrix.rows;
  // The kernels' heights, unsorted and sorted (a window inside the matrix and one over all of
  // it), and heights no kernel uses (one row per slice, a height that leaves a short last
  // slice) with a window that is not a multiple of it.
  const std::int64_t all_rows = std::max<std::int64_t>(rows, 1);
  const std::vector<std::pair<std::int64_t, std::int64_t>> heights_and_windows{
      {32, 1}, {64, 1}, {32, 256}, {64, all_rows}, {1, 1}, {5, 3}, {32, 0}};
  for (const auto& [height, window] : heights_and_windows)
    expect_sell_equals_host<Value>(device, source, make_sell_layout<Value>(matrix, height, window),
                                   height, window);
  {
    SCOPED_TRACE("ELL (one slice of every row)");
    expect_sell_equals_host<Value>(device, source, make_ell_layout<Value>(matrix), all_rows, 1);
  }
  const std::int64_t longest = longest_row_serially(matrix);
  std::vector<std::int64_t> widths{0, 1, longest / 2, longest, longest + 2};
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  for (const std::int64_t width : widths) expect_hyb_equals_host<Value>(device, source, width);
}

class DeviceLayouts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
    device_ = make_cuda_device(0);
  }
  std::unique_ptr<Device> device_;
};

TEST_F(DeviceLayouts, SellEllAndHybEqualTheHostLayoutsElementByElement) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "device layouts on '" << device_->info().name << "', seed " << seed << "\n";
  for (const testing::NamedMatrix& named : testing::conformance_matrices(seed)) {
    SCOPED_TRACE(named.name);
    {
      SCOPED_TRACE("fp64");
      expect_layouts_equal_host<double>(*device_, named.matrix);
    }
    {
      SCOPED_TRACE("fp32");
      expect_layouts_equal_host<float>(*device_, named.matrix);
    }
  }
}

TEST_F(DeviceLayouts, RefuseWhatTheHostLayoutsRefuse) {
  const CsrMatrix<double> matrix =
      testing::conformance_matrices(testing::test_seed()).front().matrix;
  const BuildSource source(matrix, *device_);
  const auto code_of = [](const auto& build) {
    try {
      build();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::internal;  // nothing thrown
  };
  EXPECT_EQ(code_of([&] { make_device_sell_layout(source, Precision::fp64, 0, 1); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] { make_device_hyb_layout(source, Precision::fp32, -1); }),
            ErrorCode::invalid_argument);
}

Candidate sell_candidate(std::uint32_t slice_height, std::uint32_t sort_window,
                         std::uint32_t block_size) {
  return Candidate{.format = kCudaSellFormatId,
                   .params = FieldSet::of(
                       CudaSellParams{.slice_height = slice_height, .sort_window = sort_window}),
                   .launch = LaunchConfig{.block_size = block_size, .grid_size = 64}};
}

// The operators hold the cached layout: its use count (the source's cache holds a weak
// reference only) counts them, and a look-up by key returns the very arrays they use.
TEST_F(DeviceLayouts, CandidatesDifferingInLaunchParametersShareOneBuild) {
  const CsrMatrix<double> matrix = testing::conformance_matrices(testing::test_seed()).at(0).matrix;
  ASSERT_GT(matrix.nnz(), 0);
  const BuildSource source(matrix, *device_);
  const FormatRegistry& registry = format_registry();
  const FormatEntry& cuda_sell = *registry.find("cuda_sell");
  const FormatEntry& cusparse_sell = *registry.find("cusparse_sell");
  const FormatEntry& cuda_ell = *registry.find("cuda_ell");
  const FormatEntry& cuda_hyb = *registry.find("cuda_hyb");

  const auto first = cuda_sell.build(source, Precision::fp64, sell_candidate(32, 1, 128));
  std::weak_ptr<const DeviceSellLayout> watched =
      shared_device_sell_layout(source, Precision::fp64, 32, 1);
  {
    const auto cached = watched.lock();
    ASSERT_NE(cached, nullptr);
    EXPECT_EQ(cached.use_count(), 2) << "the first operator and this look-up";
    const void* columns = cached->col_indices.data();
    const void* values = cached->values.data();

    const auto second = cuda_sell.build(source, Precision::fp64, sell_candidate(32, 1, 256));
    EXPECT_EQ(cached.use_count(), 3) << "another block size builds nothing new";
    const auto again = shared_device_sell_layout(source, Precision::fp64, 32, 1);
    EXPECT_EQ(again.get(), cached.get());
    EXPECT_EQ(again->col_indices.data(), columns);
    EXPECT_EQ(again->values.data(), values);
    EXPECT_EQ(second->device_bytes(), first->device_bytes());

    // cuSPARSE's unsorted SELL of the same height uses the same columns and values.
    const auto library = cusparse_sell.build(
        source, Precision::fp64,
        Candidate{.format = kCusparseSellFormatId,
                  .params = FieldSet::of(CusparseSellParams{
                      .slice_height = 32, .library_algorithm = kCusparseSpmvSellAlg1}),
                  .launch = LaunchConfig{}});
    EXPECT_EQ(cached.use_count(), 5);  // + again + cusparse_sell

    // Another sort window, another precision: other keys, other arrays.
    const auto sorted = shared_device_sell_layout(source, Precision::fp64, 32, 256);
    EXPECT_NE(sorted->col_indices.data(), columns);
    const auto narrow = shared_device_sell_layout(source, Precision::fp32, 32, 1);
    EXPECT_NE(narrow->values.data(), values);
    EXPECT_EQ(cached.use_count(), 5);
  }
  EXPECT_FALSE(watched.expired()) << "the first operator still holds it";

  // cuda_ell: one slice of every row, its own key, shared by its block sizes.
  const std::int64_t longest = longest_row_serially(matrix);
  const auto ell_candidate = [&](std::uint32_t block_size) {
    return Candidate{
        .format = kCudaEllFormatId,
        .params = FieldSet::of(CudaEllParams{.ell_width = static_cast<std::uint32_t>(longest)}),
        .launch = LaunchConfig{.block_size = block_size, .grid_size = 64}};
  };
  const auto ell_128 = cuda_ell.build(source, Precision::fp32, ell_candidate(128));
  const auto ell_512 = cuda_ell.build(source, Precision::fp32, ell_candidate(512));
  EXPECT_EQ(shared_device_sell_layout(source, Precision::fp32, matrix.rows, 1).use_count(), 3);

  // cuda_hyb: one build per ell_width, whatever the launch.
  const auto hyb_candidate = [&](std::uint32_t block_size, std::uint32_t grid_size) {
    return Candidate{.format = kCudaHybFormatId,
                     .params = FieldSet::of(CudaHybParams{.ell_width = 1}),
                     .launch = LaunchConfig{.block_size = block_size, .grid_size = grid_size}};
  };
  const auto hyb_a = cuda_hyb.build(source, Precision::fp64, hyb_candidate(128, 16));
  const auto hyb_b = cuda_hyb.build(source, Precision::fp64, hyb_candidate(512, 64));
  EXPECT_EQ(shared_device_hyb_layout(source, Precision::fp64, 1).use_count(), 3);
}

TEST_F(DeviceLayouts, ALayoutIsFreedWithItsLastOperator) {
  const CsrMatrix<double> matrix = testing::conformance_matrices(testing::test_seed()).at(0).matrix;
  const BuildSource source(matrix, *device_);
  const FormatEntry& cuda_sell = *format_registry().find("cuda_sell");
  std::weak_ptr<const DeviceSellLayout> watched;
  {
    const auto op = cuda_sell.build(source, Precision::fp32, sell_candidate(64, 256, 128));
    watched = shared_device_sell_layout(source, Precision::fp32, 64, 256);
    EXPECT_FALSE(watched.expired());
  }
  EXPECT_TRUE(watched.expired());
}

#else

TEST(DeviceLayouts, NeedCuda) { GTEST_SKIP() << "built without CUDA: no device layouts"; }

#endif

}  // namespace
}  // namespace spmvd
