#include "partition/symmetric_permutation.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace spmvd {
namespace {

void check_square(std::string_view owner, const CsrMatrix<double>& m) {
  if (m.rows != m.cols)
    throw_invalid(std::string(owner) + ": the matrix is " + std::to_string(m.rows) + " x " +
                  std::to_string(m.cols) + "; a symmetric permutation needs a square matrix");
}

void check_order_size(std::string_view owner, const CsrMatrix<double>& m,
                      std::span<const std::int32_t> order) {
  if (static_cast<std::int64_t>(order.size()) != m.rows)
    throw_invalid(std::string(owner) + ": the order has " + std::to_string(order.size()) +
                  " entries, the matrix " + std::to_string(m.rows) + " rows");
}

}  // namespace

std::vector<std::int32_t> inverse_permutation(std::string_view owner,
                                              std::span<const std::int32_t> order) {
  const auto n = static_cast<std::int64_t>(order.size());
  std::vector<std::int32_t> inverse(order.size(), -1);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t old = order[static_cast<std::size_t>(i)];
    if (old < 0 || old >= n)
      throw_invalid(std::string(owner) + ": order entry " + std::to_string(i) + " is " +
                    std::to_string(old) + ", outside 0.." + std::to_string(n - 1));
    std::int32_t& slot = inverse[static_cast<std::size_t>(old)];
    if (slot >= 0)
      throw_invalid(std::string(owner) + ": order entry " + std::to_string(i) + " repeats row " +
                    std::to_string(old));
    slot = static_cast<std::int32_t>(i);
  }
  return inverse;
}

CsrMatrix<double> permute_symmetric(const CsrMatrix<double>& m,
                                    std::span<const std::int32_t> order) {
  check_square("permute_symmetric", m);
  check_order_size("permute_symmetric", m, order);
  const std::vector<std::int32_t> inverse = inverse_permutation("permute_symmetric", order);
  CsrMatrix<double> out{m.rows, m.cols, {}, {}, {}};
  out.row_offsets.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  for (std::int64_t i = 0; i < m.rows; ++i)
    out.row_offsets[static_cast<std::size_t>(i + 1)] =
        out.row_offsets[static_cast<std::size_t>(i)] +
        m.row_length(order[static_cast<std::size_t>(i)]);
  out.col_indices.resize(m.col_indices.size());
  out.values.resize(m.values.size());
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, m.rows, 1024),
      [&](const tbb::blocked_range<std::int64_t>& range) {
        std::vector<std::pair<ColIndex, double>> row;
        for (std::int64_t i = range.begin(); i < range.end(); ++i) {
          const auto old = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
          row.clear();
          for (RowOffset k = m.row_offsets[old]; k < m.row_offsets[old + 1]; ++k)
            row.emplace_back(
                inverse[static_cast<std::size_t>(m.col_indices[static_cast<std::size_t>(k)])],
                m.values[static_cast<std::size_t>(k)]);
          std::sort(row.begin(), row.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
          auto at = static_cast<std::size_t>(out.row_offsets[static_cast<std::size_t>(i)]);
          for (const auto& [col, value] : row) {
            out.col_indices[at] = col;
            out.values[at] = value;
            ++at;
          }
        }
      });
  return out;
}

namespace {

// max |renumber(r) - renumber(c)| over the entries, parallel over rows.
template <typename Renumber>
std::int64_t bandwidth_of(const CsrMatrix<double>& m, Renumber renumber) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, m.rows, 4096), std::int64_t{0},
      [&](const tbb::blocked_range<std::int64_t>& range, std::int64_t widest) {
        for (std::int64_t r = range.begin(); r < range.end(); ++r) {
          const std::int64_t row = renumber(r);
          for (RowOffset k = m.row_offsets[static_cast<std::size_t>(r)];
               k < m.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
            const std::int64_t col = renumber(m.col_indices[static_cast<std::size_t>(k)]);
            widest = std::max(widest, row > col ? row - col : col - row);
          }
        }
        return widest;
      },
      [](std::int64_t a, std::int64_t b) { return std::max(a, b); });
}

}  // namespace

std::int64_t matrix_bandwidth(const CsrMatrix<double>& m) {
  return bandwidth_of(m, [](std::int64_t i) { return i; });
}

std::int64_t matrix_bandwidth(const CsrMatrix<double>& m, std::span<const std::int32_t> order) {
  check_square("matrix_bandwidth", m);
  check_order_size("matrix_bandwidth", m, order);
  const std::vector<std::int32_t> inverse = inverse_permutation("matrix_bandwidth", order);
  return bandwidth_of(
      m, [&](std::int64_t i) -> std::int64_t { return inverse[static_cast<std::size_t>(i)]; });
}

}  // namespace spmvd
