#include "bench/result_check.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>

#include "core/error.hpp"

namespace spmvd {
namespace {

template <typename Value>
void fill_reference(const CsrMatrix<Value>& m, SpmvReference& ref) {
  ref.y.assign(static_cast<std::size_t>(m.rows), 0.0);
  reference_spmv(m, ref.x.data(), ref.y.data(), 1.0, 0.0);
  const double u = std::numeric_limits<Value>::epsilon() / 2;  // unit roundoff
  ref.bound.resize(static_cast<std::size_t>(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double magnitude = 0.0;
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      magnitude += std::abs(static_cast<double>(m.values[k]) * ref.x[m.col_indices[k]]);
    // gamma(n) only means something for n*u < 1; past half of that, allow any rounding.
    const double nu = static_cast<double>(m.row_length(r) + 2) * u;
    ref.bound[r] = 2.0 * (nu < 0.5 ? nu / (1.0 - nu) : 1.0) * magnitude;
  }
}

template <typename Value>
SpmvReference make_reference(const CsrMatrix<double>& m, std::uint64_t seed) {
  SpmvReference ref;
  std::mt19937_64 rng(seed);
  ref.x.resize(static_cast<std::size_t>(m.cols));
  for (double& v : ref.x)
    v = static_cast<double>(static_cast<Value>(static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0));
  if constexpr (std::is_same_v<Value, double>)
    fill_reference(m, ref);
  else
    fill_reference(convert_values<Value>(m), ref);
  return ref;
}

}  // namespace

SpmvReference make_spmv_reference(const CsrMatrix<double>& m, Precision precision, std::uint64_t seed) {
  return precision == Precision::fp32 ? make_reference<float>(m, seed) : make_reference<double>(m, seed);
}

template <typename Value>
CheckOutcome check_spmv_result(const std::vector<Value>& y, const SpmvReference& ref) {
  if (y.size() != ref.y.size())
    throw_invalid("check_spmv_result: y has " + std::to_string(y.size()) + " entries, the reference " +
                  std::to_string(ref.y.size()));
  CheckOutcome outcome;
  for (std::size_t r = 0; r < y.size(); ++r) {
    const double got = static_cast<double>(y[r]);
    const double error = std::abs(got - ref.y[r]);
    double ratio = error == 0.0 ? 0.0 : error / ref.bound[r];  // error > 0 with bound 0: inf
    if (!std::isfinite(got)) ratio = std::numeric_limits<double>::infinity();
    outcome.max_error_ratio = std::max(outcome.max_error_ratio, ratio);
    if (ratio <= 1.0) continue;
    if (outcome.wrong_rows++ == 0) {
      std::ostringstream message;
      message.precision(17);
      message << "row " << r << ": got " << got << ", expected " << ref.y[r] << " (allowed error "
              << ref.bound[r] << ")";
      outcome.message = message.str();
    }
  }
  if (outcome.wrong_rows > 1)
    outcome.message += "; " + std::to_string(outcome.wrong_rows) + " rows wrong in all";
  return outcome;
}

template CheckOutcome check_spmv_result(const std::vector<float>&, const SpmvReference&);
template CheckOutcome check_spmv_result(const std::vector<double>&, const SpmvReference&);

}  // namespace spmvd
