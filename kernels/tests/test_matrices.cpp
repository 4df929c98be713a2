#include "kernels/tests/test_matrices.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <random>
#include <unordered_set>
#include <utility>
#include <vector>

namespace spmvd::testing {
namespace {

using Rng = std::mt19937_64;

// `length` distinct sorted columns of [0, cols).
std::vector<ColIndex> random_columns(std::int64_t length, std::int64_t cols, Rng& rng) {
  std::vector<ColIndex> out;
  if (length * 4 < cols) {  // sparse row: draw until distinct
    std::unordered_set<ColIndex> seen;
    std::uniform_int_distribution<ColIndex> column(0, static_cast<ColIndex>(cols - 1));
    while (static_cast<std::int64_t>(out.size()) < length) {
      const ColIndex c = column(rng);
      if (seen.insert(c).second) out.push_back(c);
    }
    std::sort(out.begin(), out.end());
  } else {  // dense row: selection sampling (Knuth's Algorithm S), already sorted
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::int64_t needed = length;
    for (std::int64_t c = 0; c < cols && needed > 0; ++c)
      if (unit(rng) * static_cast<double>(cols - c) < static_cast<double>(needed)) {
        out.push_back(static_cast<ColIndex>(c));
        --needed;
      }
  }
  return out;
}

CsrMatrix<double> random_matrix(std::int64_t rows, std::int64_t cols,
                                const std::function<std::int64_t(std::int64_t, Rng&)>& row_length,
                                Rng& rng) {
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(1, 0);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t length = std::min(row_length(r, rng), cols);
    for (const ColIndex c : random_columns(length, cols, rng)) {
      m.col_indices.push_back(c);
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(m.nnz());
  }
  validate(m);
  return m;
}

auto uniform_length(std::int64_t low, std::int64_t high) {
  return [low, high](std::int64_t, Rng& rng) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng);
  };
}

}  // namespace

std::vector<NamedMatrix> conformance_matrices(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<NamedMatrix> out;
  // 15% of rows empty, the rest 1..20 entries.
  out.push_back({"square_200_with_empty_rows",
                 random_matrix(
                     200, 200,
                     [](std::int64_t, Rng& g) -> std::int64_t {
                       if (std::uniform_real_distribution<double>(0, 1)(g) < 0.15) return 0;
                       return std::uniform_int_distribution<std::int64_t>(1, 20)(g);
                     },
                     rng)});
  out.push_back({"tall_300x50", random_matrix(300, 50, uniform_length(0, 12), rng)});
  out.push_back({"wide_40x500", random_matrix(40, 500, uniform_length(0, 120), rng)});
  // One row of 12000 entries among short and empty ones.
  out.push_back({"one_long_row_20x15000",
                 random_matrix(
                     20, 15000,
                     [](std::int64_t r, Rng& g) -> std::int64_t {
                       return r == 7 ? 12000 : std::uniform_int_distribution<std::int64_t>(0, 5)(g);
                     },
                     rng)});
  out.push_back({"one_row_1x1000", random_matrix(1, 1000, uniform_length(300, 300), rng)});
  out.push_back({"one_column_500x1", random_matrix(500, 1, uniform_length(0, 1), rng)});
  out.push_back({"dense_64x64", random_matrix(64, 64, uniform_length(64, 64), rng)});
  // Heavy-tailed row lengths (Pareto-like): many short rows, a few in the thousands.
  out.push_back({"heavy_tail_2000x3000",
                 random_matrix(
                     2000, 3000,
                     [](std::int64_t, Rng& g) -> std::int64_t {
                       const double u = std::uniform_real_distribution<double>(1e-3, 1.0)(g);
                       return static_cast<std::int64_t>(2.0 / (u * u));
                     },
                     rng)});
  // More rows than one sweep of a full wave of resident blocks covers on an H100 (132 SMs x
  // 2048 threads / 2 lanes per row = 135168 rows), so grid-stride loops go round.
  out.push_back(
      {"many_short_rows_200000", random_matrix(200000, 200000, uniform_length(0, 4), rng)});
  // A band of 7 diagonals (a 1-D stencil of width 7): the structure DIA and SELL are for.
  {
    CsrMatrix<double> band{1000, 1000, {0}, {}, {}};
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    for (std::int64_t r = 0; r < band.rows; ++r) {
      for (std::int64_t c = std::max<std::int64_t>(r - 3, 0); c <= std::min<std::int64_t>(r + 3, 999);
           ++c) {
        band.col_indices.push_back(static_cast<ColIndex>(c));
        band.values.push_back(value(rng));
      }
      band.row_offsets.push_back(static_cast<RowOffset>(band.col_indices.size()));
    }
    out.push_back({"band_7_1000", std::move(band)});
  }
  out.push_back({"no_entries_50x60", random_matrix(50, 60, uniform_length(0, 0), rng)});
  out.push_back({"no_rows_0x10", random_matrix(0, 10, uniform_length(0, 0), rng)});
  out.push_back({"no_columns_5x0", random_matrix(5, 0, uniform_length(0, 0), rng)});
  // The band of 7 on 2000 rows with rows and columns renumbered at random: a structure whose
  // numbering lost its locality, where cuda_bro_ell offers RCM (issue 16). Last, so that the
  // matrices above keep their random streams.
  {
    std::vector<std::int32_t> renumber(2000);
    for (std::size_t i = 0; i < renumber.size(); ++i) renumber[i] = static_cast<std::int32_t>(i);
    std::shuffle(renumber.begin(), renumber.end(), rng);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::vector<std::vector<std::pair<ColIndex, double>>> rows(renumber.size());
    for (std::int64_t r = 0; r < 2000; ++r)
      for (std::int64_t c = std::max<std::int64_t>(r - 3, 0);
           c <= std::min<std::int64_t>(r + 3, 1999); ++c)
        rows[static_cast<std::size_t>(renumber[static_cast<std::size_t>(r)])].emplace_back(
            renumber[static_cast<std::size_t>(c)], value(rng));
    CsrMatrix<double> band{2000, 2000, {0}, {}, {}};
    for (auto& row : rows) {
      std::sort(row.begin(), row.end());
      for (const auto& [c, v] : row) {
        band.col_indices.push_back(c);
        band.values.push_back(v);
      }
      band.row_offsets.push_back(static_cast<RowOffset>(band.col_indices.size()));
    }
    validate(band);
    out.push_back({"band_7_2000_renumbered", std::move(band)});
  }
  return out;
}

std::uint64_t test_seed() {
  if (const char* text = std::getenv("SPMVD_TEST_SEED")) return std::strtoull(text, nullptr, 10);
  return 20261122;
}

}  // namespace spmvd::testing
