// The formats whose arrays are the CSR's own, built from one BuildSource on CUDA device 0
// (issue 17 "build once"; label `gpu`: skips visibly without a CUDA device): the arrays derived
// on the device (COO row indices, cuSPARSE's 32-bit offsets, 64-bit columns) equal the host's,
// and building every candidate of cuda_csr_vector, cuda_csr_scalar, cusparse_csr, cuda_coo and
// cusparse_coo from one source copies nothing more from the host than the source's one upload,
// each operator holding the source's CSR (and multiplying right over it).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/common/coo_layout.hpp"
#include "kernels/formats/common/csr_derived_arrays.hpp"
#include "kernels/tests/counting_device.hpp"
#include "kernels/tests/test_matrices.hpp"
#include "tuner/feature_extraction.hpp"

// The derived arrays are compiled only with CUDA (csr_derived_arrays.cu).
#if SPMVD_WITH_CUDA
namespace spmvd {
namespace {

template <typename T>
std::vector<T> read_back(Device& device, const DeviceBuffer& buffer) {
  std::vector<T> host(buffer.bytes() / sizeof(T));
  device.copy_to_host(host.data(), buffer.data(), buffer.bytes());
  device.synchronize();
  return host;
}

// The conformance shapes (empty rows, one very long row, non-square both ways, no entries, no
// rows, no columns, more rows than one sweep) and a few more for the expansion: rows longer
// than a warp's 32 lanes and than a block, every row empty but the last.
std::vector<testing::NamedMatrix> matrices(std::uint64_t seed) {
  std::vector<testing::NamedMatrix> all = testing::conformance_matrices(seed);
  CsrMatrix<double> long_rows{4, 5000, {0}, {}, {}};
  for (const std::int64_t length : {33, 0, 4999, 1025}) {
    for (std::int64_t c = 0; c < length; ++c) {
      long_rows.col_indices.push_back(static_cast<ColIndex>(c));
      long_rows.values.push_back(static_cast<double>(1 + c % 8));  // sums exact in fp32 too
    }
    long_rows.row_offsets.push_back(static_cast<RowOffset>(long_rows.col_indices.size()));
  }
  all.push_back({"rows of 33, 0, 4999 and 1025 entries", long_rows});
  CsrMatrix<double> last_row_only{70000, 3, std::vector<RowOffset>(70000, 0), {0, 2}, {1.0, 2.0}};
  last_row_only.row_offsets.push_back(2);
  all.push_back({"70000 rows, only the last non-empty", last_row_only});
  return all;
}

TEST(CsrDerivedArrays, RowIndicesExpandedOnTheDeviceEqualTheHostCooLayout) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  const std::uint64_t seed = testing::test_seed();
  std::cout << "derived arrays on '" << device->info().name << "', seed " << seed << "\n";
  for (const testing::NamedMatrix& named : matrices(seed)) {
    SCOPED_TRACE(named.name);
    const auto csr = upload_csr(*device, named.matrix, Precision::fp64);
    const DeviceBuffer rows = expand_row_indices(*device, *csr);
    EXPECT_EQ(read_back<std::int32_t>(*device, rows),
              make_coo_layout<double>(named.matrix).row_indices);
  }
}

TEST(CsrDerivedArrays, NarrowedOffsetsAndWidenedColumnsEqualTheHosts) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const auto device = make_cuda_device(0);
  for (const testing::NamedMatrix& named : matrices(testing::test_seed())) {
    SCOPED_TRACE(named.name);
    const CsrMatrix<double>& m = named.matrix;
    const auto csr = upload_csr(*device, m, Precision::fp32);
    const DeviceBuffer offsets = narrow_row_offsets(*device, *csr);
    EXPECT_EQ(read_back<std::int32_t>(*device, offsets),
              std::vector<std::int32_t>(m.row_offsets.begin(), m.row_offsets.end()));
    const DeviceBuffer columns = widen_col_indices(*device, *csr);
    EXPECT_EQ(read_back<std::int64_t>(*device, columns),
              std::vector<std::int64_t>(m.col_indices.begin(), m.col_indices.end()));
  }
}

// y = A x (alpha 1, beta 0, y poisoned with NaN) against the reference over the rounded values.
template <typename Value>
void expect_multiplies_right(Device& device, SpmvOperator& op, const CsrMatrix<double>& m) {
  const CsrMatrix<Value> rounded = convert_values<Value>(m);
  std::vector<Value> x(static_cast<std::size_t>(m.cols));
  // Quarters: exact in fp32, so only the summation order can differ from the reference.
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<Value>(0.25 * (1 + i % 4));
  const DeviceBuffer x_device = upload(device, x.data(), x.size());
  DeviceBuffer y_device(device, static_cast<std::size_t>(m.rows) * sizeof(Value));
  device.fill_bytes(y_device.data(), 0xFF, y_device.bytes());
  op.apply(x_device.data(), y_device.data(), 1.0, 0.0);
  const std::vector<Value> y = read_back<Value>(device, y_device);
  const std::vector<double> x_double(x.begin(), x.end());
  std::vector<double> expected(static_cast<std::size_t>(m.rows), 0.0);
  reference_spmv(rounded, x_double.data(), expected.data(), 1.0, 0.0);
  int reported = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double magnitude = 0.0;
    for (RowOffset k = rounded.row_offsets[r]; k < rounded.row_offsets[r + 1]; ++k)
      magnitude +=
          std::abs(static_cast<double>(rounded.values[k]) * x_double[rounded.col_indices[k]]);
    const double bound = (sizeof(Value) == 4 ? 1e-5 : 1e-12) * magnitude;
    if (!(std::abs(static_cast<double>(y[r]) - expected[r]) <= bound) && reported++ < 5)
      ADD_FAILURE() << "row " << r << ": got " << y[r] << ", expected " << expected[r];
  }
}

// What building every candidate of a format from the source cost: bytes copied from the host,
// bytes allocated, and the operators.
struct Built {
  std::vector<std::unique_ptr<SpmvOperator>> ops;
  std::uint64_t uploaded_bytes = 0;
  std::uint64_t allocated_bytes = 0;
};

template <typename Value>
Built build_every_candidate(const BuildSource& source, testing::CountingDevice& device,
                            std::string_view format) {
  Built built;
  const FormatEntry* entry = format_registry().find(format);
  if (entry == nullptr) {
    ADD_FAILURE() << format << " is not registered";
    return built;
  }
  const MatrixFeatures features = extract_features(source.host());
  for (const Candidate& candidate : entry->rules->candidates(features, device.info())) {
    const std::uint64_t uploaded = device.uploaded_bytes, allocated = device.allocated_bytes;
    built.ops.push_back(entry->build(source, precision_of<Value>(), candidate));
    built.uploaded_bytes += device.uploaded_bytes - uploaded;
    built.allocated_bytes += device.allocated_bytes - allocated;
    expect_multiplies_right<Value>(device, *built.ops.back(), source.host());
  }
  return built;
}

template <typename Value>
void expect_one_upload_for_every_format(const CsrMatrix<double>& m) {
  const Precision precision = precision_of<Value>();
  testing::CountingDevice device(make_cuda_device(0));
  const BuildSource source(m, device);
  const auto csr = source.device_csr(precision);
  EXPECT_EQ(device.uploaded_bytes, csr->bytes());

  // The CSR formats' arrays are the source's: nothing uploaded, nothing allocated.
  for (const std::string_view format : {"cuda_csr_vector", "cuda_csr_scalar"}) {
    const Built built = build_every_candidate<Value>(source, device, format);
    EXPECT_EQ(built.uploaded_bytes, 0U) << format;
    EXPECT_EQ(built.allocated_bytes, 0U) << format;
    EXPECT_EQ(csr.use_count(), static_cast<long>(2 + built.ops.size())) << format << " copied it";
  }
  // COO: the source's columns and values, and 32-bit row indices made once on the device for
  // every launch of cuda_coo, and shared with cusparse_coo while they live.
  const Built coo = build_every_candidate<Value>(source, device, "cuda_coo");
  EXPECT_EQ(coo.uploaded_bytes, 0U);
  EXPECT_EQ(coo.allocated_bytes, static_cast<std::uint64_t>(m.nnz()) * sizeof(std::int32_t));
  const Built cusparse_coo = build_every_candidate<Value>(source, device, "cusparse_coo");
  EXPECT_EQ(cusparse_coo.uploaded_bytes, 0U);
  EXPECT_EQ(shared_row_indices(source, *csr).use_count(),
            static_cast<long>(1 + coo.ops.size() + cusparse_coo.ops.size()));
  // cuSPARSE CSR: the source's columns and values, 32-bit offsets made once on the device for
  // ALG1 and ALG2 (allocations beside them: cuSPARSE's workspace and scratch vectors).
  const Built cusparse_csr = build_every_candidate<Value>(source, device, "cusparse_csr");
  EXPECT_EQ(cusparse_csr.uploaded_bytes, 0U);
  EXPECT_EQ(shared_row_offsets32(source, *csr).use_count(),
            static_cast<long>(1 + cusparse_csr.ops.size()));
  // Every operator holds the source's one CSR: this copy, the source's and one per operator.
  EXPECT_EQ(csr.use_count(), static_cast<long>(2 + coo.ops.size() + cusparse_coo.ops.size() +
                                               cusparse_csr.ops.size()));
  EXPECT_EQ(source.device_csr(precision), csr);
}

TEST(CsrSharing, EveryCsrAndCooCandidateBuildsFromTheSourcesOneUpload) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  for (const testing::NamedMatrix& named : matrices(testing::test_seed())) {
    SCOPED_TRACE(named.name);
    expect_one_upload_for_every_format<float>(named.matrix);
    expect_one_upload_for_every_format<double>(named.matrix);
  }
}

}  // namespace
}  // namespace spmvd
#endif  // SPMVD_WITH_CUDA
