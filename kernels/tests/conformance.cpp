#include "kernels/tests/conformance.hpp"

#include <limits>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/tests/test_matrices.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd::testing {
namespace {

// Relative to sum_j |alpha a_ij x_j| + |beta y_i|: the accumulated rounding of a dot product
// is bounded by a multiple of unit roundoff times that sum, whatever the summation order.
template <typename Value>
constexpr double tolerance() {
  return sizeof(Value) == 4 ? 1e-5 : 1e-12;
}

std::vector<Candidate> spread(const std::vector<Candidate>& all) {
  if (all.size() <= kMaxCandidatesPerMatrix) return all;
  std::vector<Candidate> out;
  for (std::size_t i = 0; i < kMaxCandidatesPerMatrix; ++i)
    out.push_back(all[i * (all.size() - 1) / (kMaxCandidatesPerMatrix - 1)]);
  return out;
}

std::string describe(const Candidate& candidate) {
  std::ostringstream os;
  os << "format " << candidate.format.value << " params {" << candidate.params << "} launch {"
     << candidate.launch << "}";
  return os.str();
}

template <typename Value>
std::vector<Value> random_vector(std::int64_t size, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<Value> out(static_cast<std::size_t>(size));
  for (Value& v : out) v = static_cast<Value>(value(rng));
  return out;
}

// Compares y (from the device) with alpha*A*x + beta*y0 computed in double on the same
// (rounded) inputs. Reports the first mismatching rows.
template <typename Value>
void expect_matches_reference(const CsrMatrix<Value>& a, const std::vector<Value>& x,
                              const std::vector<Value>& y0, const std::vector<Value>& y,
                              double alpha, double beta) {
  const std::vector<double> x_double(x.begin(), x.end());
  std::vector<double> expected(y0.begin(), y0.end());
  reference_spmv(a, x_double.data(), expected.data(), alpha, beta);
  int reported = 0;
  std::int64_t mismatches = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    double magnitude = beta == 0.0 ? 0.0 : std::abs(beta * static_cast<double>(y0[r]));
    for (RowOffset k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k)
      magnitude += std::abs(alpha * static_cast<double>(a.values[k]) * x_double[a.col_indices[k]]);
    const double got = static_cast<double>(y[r]);
    const double bound = tolerance<Value>() * magnitude;
    if (!(std::abs(got - expected[r]) <= bound)) {  // written so that NaN fails
      ++mismatches;
      if (reported++ < 5)
        ADD_FAILURE() << "row " << r << " (length " << a.row_length(r) << "): got " << got
                      << ", expected " << expected[r] << ", allowed error " << bound;
    }
  }
  EXPECT_EQ(mismatches, 0) << "rows differing from the reference";
}

template <typename Value>
void check_precision(const FormatEntry& entry, Device& device, const NamedMatrix& named,
                     std::mt19937_64& rng) {
  const Precision precision = precision_of<Value>();
  const CsrMatrix<double>& matrix = named.matrix;
  // Thorough: every candidate a format can offer (RCM sized) is checked.
  const MatrixFeatures features =
      extract_features(matrix, format_registry(), FeatureEffort::thorough);
  // Every kernel must be right whatever the rules would choose: the space is enumerated as for
  // a matrix of unknown blocks, so that BSR offers every block size on every test matrix however
  // much it fills (with counted blocks its fill rule drops it on most of them).
  MatrixFeatures unblocked = features;
  unblocked.format_features.erase("cusparse_bsr");
  const std::vector<Candidate> all = entry.rules->candidates(unblocked, device.info());
  if (all.empty()) {
    // A format whose space depends on the structure (DIA's diagonals) may offer nothing, but
    // only where it would never be chosen.
    EXPECT_FALSE(entry.rules->admissible(features, device.info(), precision,
                                         std::numeric_limits<std::uint64_t>::max()))
        << entry.rules->name() << " is admissible on " << named.name << " but offers no candidate";
    std::cout << "  " << entry.rules->name() << " " << named.name << " " << to_string(precision)
              << ": no candidate (not admissible)\n";
    return;
  }

  for (const Candidate& candidate : spread(all)) {
    SCOPED_TRACE(named.name + " " + std::string(to_string(precision)) + " " + describe(candidate));
    EXPECT_TRUE(entry.rules->is_valid(candidate, unblocked, device.info()));
    const auto op = entry.build(matrix, precision, candidate, device);
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->precision(), precision);
    // The rules' figure decides admissibility: it must never be below what build allocated
    // (with the exact block counts, for BSR).
    const std::uint64_t predicted_bytes = entry.rules->device_bytes(features, precision, candidate);
    EXPECT_LE(op->device_bytes(), predicted_bytes);
    if (op->device_bytes() != predicted_bytes)  // bounds, not exact counts: show the margin
      std::cout << "  " << entry.rules->name() << " " << named.name << " " << to_string(precision)
                << " " << describe(candidate) << ": built " << op->device_bytes() << " B, rules "
                << predicted_bytes << " B\n";

    expect_operator_matches_reference<Value>(*op, device, matrix, rng);
  }
}

}  // namespace

template <typename Value>
void expect_operator_matches_reference(SpmvOperator& op, Device& device,
                                       const CsrMatrix<double>& matrix, std::mt19937_64& rng) {
  const CsrMatrix<Value> rounded = convert_values<Value>(matrix);
  const auto x = random_vector<Value>(matrix.cols, rng);
  const DeviceBuffer x_device = upload(device, x.data(), x.size());
  const std::size_t y_bytes = static_cast<std::size_t>(matrix.rows) * sizeof(Value);
  DeviceBuffer y_device(device, y_bytes);
  std::vector<Value> y(static_cast<std::size_t>(matrix.rows));

  {  // beta = 0: y is write-only, the NaN poison must not survive.
    SCOPED_TRACE("alpha=1.5 beta=0, y poisoned with NaN");
    const std::vector<Value> y0(y.size(), Value(0));
    device.fill_bytes(y_device.data(), 0xFF, y_bytes);
    op.apply(x_device.data(), y_device.data(), 1.5, 0.0);
    device.synchronize();
    device.copy_to_host(y.data(), y_device.data(), y_bytes);
    expect_matches_reference(rounded, x, y0, y, 1.5, 0.0);
  }
  {  // Non-trivial alpha and beta (exact in fp32), applied again on the same operator.
    SCOPED_TRACE("alpha=-0.75 beta=1.25");
    const auto y0 = random_vector<Value>(matrix.rows, rng);
    device.copy_from_host(y_device.data(), y0.data(), y_bytes);
    op.apply(x_device.data(), y_device.data(), -0.75, 1.25);
    device.synchronize();
    device.copy_to_host(y.data(), y_device.data(), y_bytes);
    expect_matches_reference(rounded, x, y0, y, -0.75, 1.25);
  }
}

template void expect_operator_matches_reference<float>(SpmvOperator&, Device&,
                                                       const CsrMatrix<double>&,
                                                       std::mt19937_64&);
template void expect_operator_matches_reference<double>(SpmvOperator&, Device&,
                                                        const CsrMatrix<double>&,
                                                        std::mt19937_64&);

void check_format_conformance(const FormatEntry& entry, Device& device) {
  const std::uint64_t seed = test_seed();
  std::cout << "kernels conformance: format " << entry.rules->name() << " on '"
            << device.info().name << "', seed " << seed << " (set SPMVD_TEST_SEED to repeat)\n";
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ULL);
  for (const NamedMatrix& named : conformance_matrices(seed)) {
    check_precision<float>(entry, device, named, rng);
    check_precision<double>(entry, device, named, rng);
  }
}

}  // namespace spmvd::testing
