#include "models/sample_generators.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/structure_features.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_features.hpp"

namespace spmvd {
namespace {

// splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
// calibration draws hundreds of millions of numbers, and this is several times faster than
// std::mt19937_64 with statistics that are ample for choosing columns.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

// A cols-column sample with the given row offsets and random values; column_of(r, j, length,
// rng) picks the j-th of row r's `length` columns (ascending in j, below cols).
template <typename ColumnOf>
CsrMatrix<double> sample_with_offsets(std::int64_t cols, std::vector<RowOffset> row_offsets,
                                      std::uint64_t seed, ColumnOf column_of) {
  CsrMatrix<double> m;
  m.rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  m.cols = cols;
  m.row_offsets = std::move(row_offsets);
  const auto nnz = static_cast<std::size_t>(m.row_offsets.back());
  m.col_indices.resize(nnz);
  m.values.resize(nnz);
  // In fixed chunks of rows on all cores (calibration generates ~600 M non-zeros per
  // precision; single-threaded, the H100 calibration took 121 s instead of 85 s); each chunk
  // has its own stream, so the sample depends on the seed only, not on the threads.
  constexpr std::int64_t kChunkRows = 16384;
  const std::int64_t rows = m.rows;
  const std::int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  tbb::parallel_for(std::int64_t{0}, chunks, [&](std::int64_t chunk) {
    SplitMix64 rng{seed ^ (static_cast<std::uint64_t>(chunk) * 0xd1b54a32d192ed03ULL)};
    const std::int64_t first = chunk * kChunkRows, last = std::min(rows, first + kChunkRows);
    for (std::int64_t r = first; r < last; ++r) {
      const auto begin = static_cast<std::size_t>(m.row_offsets[static_cast<std::size_t>(r)]);
      const std::int64_t length =
          static_cast<std::int64_t>(m.row_offsets[static_cast<std::size_t>(r) + 1]) -
          static_cast<std::int64_t>(begin);
      for (std::int64_t j = 0; j < length; ++j) {
        const std::size_t k = begin + static_cast<std::size_t>(j);
        m.col_indices[k] = static_cast<ColIndex>(column_of(r, j, length, rng));
        m.values[k] = 2.0 * rng.unit() - 1.0;
      }
    }
  });
  return m;
}

// A rows x cols sample in which every row holds row_length non-zeros with random values;
// column_of(r, j, rng) picks row r's j-th column (ascending in j, below cols).
template <typename ColumnOf>
CsrMatrix<double> fixed_row_length_sample(const char* name, std::int64_t rows, std::int64_t cols,
                                          std::int64_t row_length, std::uint64_t seed,
                                          ColumnOf column_of) {
  if (row_length < 1 || row_length > cols || rows < 1 || rows > kMaxDimension ||
      cols > kMaxDimension) {
    throw_invalid(std::string(name) + ": row length " + std::to_string(row_length) +
                  " must be in [1, cols = " + std::to_string(cols) + "] and rows = " +
                  std::to_string(rows) + " in [1, 2^31 - 1]");
  }
  std::vector<RowOffset> row_offsets(static_cast<std::size_t>(rows) + 1);
  for (std::size_t r = 0; r < row_offsets.size(); ++r)
    row_offsets[r] = static_cast<RowOffset>(static_cast<std::int64_t>(r) * row_length);
  return sample_with_offsets(cols, std::move(row_offsets), seed,
                             [&](std::int64_t r, std::int64_t j, std::int64_t, SplitMix64& rng) {
                               return column_of(r, j, rng);
                             });
}

}  // namespace

namespace {

// Row r's j-th column of c = row_length: uniform in bin j, [j * cols / c, (j + 1) * cols / c),
// non-empty because c <= cols.
CsrMatrix<double> binned_uniform_sample(const char* name, std::int64_t rows, std::int64_t cols,
                                        std::int64_t row_length, std::uint64_t seed) {
  return fixed_row_length_sample(
      name, rows, cols, row_length, seed, [&](std::int64_t, std::int64_t j, SplitMix64& rng) {
        const std::int64_t begin = j * cols / row_length;
        const std::int64_t end = (j + 1) * cols / row_length;
        return begin +
               static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(end - begin));
      });
}

}  // namespace

CsrMatrix<double> uniform_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                            std::uint64_t seed) {
  return binned_uniform_sample("uniform_row_length_sample", rows, rows, row_length, seed);
}

CsrMatrix<double> wide_uniform_row_length_sample(std::int64_t rows, std::int64_t cols,
                                                 std::int64_t row_length, std::uint64_t seed) {
  return binned_uniform_sample("wide_uniform_row_length_sample", rows, cols, row_length, seed);
}

CsrMatrix<double> banded_row_length_sample(std::int64_t rows, std::int64_t row_length,
                                           std::uint64_t seed) {
  return fixed_row_length_sample(
      "banded_row_length_sample", rows, rows, row_length, seed,
      [&](std::int64_t r, std::int64_t j, SplitMix64&) {
        return std::clamp<std::int64_t>(r - row_length / 2, 0, rows - row_length) + j;
      });
}

CsrMatrix<double> banded_mixed_length_sample(std::int64_t rows, std::int64_t mean_length,
                                             std::uint64_t seed) {
  if (mean_length < 1 || mean_length > rows || rows > kMaxDimension)
    throw_invalid("banded_mixed_length_sample: mean row length " + std::to_string(mean_length) +
                  " must be in [1, rows = " + std::to_string(rows) + "] and rows <= 2^31 - 1");
  const std::int64_t spread = mean_length / 2;
  std::vector<RowOffset> row_offsets(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    // Row r's length from its own stream (seed, r): the same whatever the threads.
    SplitMix64 rng{seed ^ (static_cast<std::uint64_t>(r) * 0x9fb21c651e98df25ULL)};
    const auto draw =
        static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(2 * spread + 1));
    row_offsets[static_cast<std::size_t>(r) + 1] =
        row_offsets[static_cast<std::size_t>(r)] +
        static_cast<RowOffset>(std::min(mean_length - spread + draw, rows));
  }
  return sample_with_offsets(rows, std::move(row_offsets), seed,
                             [&](std::int64_t r, std::int64_t j, std::int64_t length, SplitMix64&) {
                               return std::clamp<std::int64_t>(r - length / 2, 0, rows - length) +
                                      j;
                             });
}

CsrMatrix<double> with_long_row(const CsrMatrix<double>& base, std::int64_t length) {
  if (base.rows < 1 || base.nnz() < 1 || length < 1 || length > base.cols)
    throw_invalid("with_long_row: a row of " + std::to_string(length) + " entries in a " +
                  std::to_string(base.rows) + " x " + std::to_string(base.cols) + " sample of " +
                  std::to_string(base.nnz()) +
                  " non-zeros needs a row, an entry and 1 <= length <= columns");
  const auto first_rest = static_cast<std::size_t>(base.row_offsets[1]);
  CsrMatrix<double> m;
  m.rows = base.rows;
  m.cols = base.cols;
  m.col_indices.reserve(static_cast<std::size_t>(length) + base.col_indices.size() - first_rest);
  m.values.reserve(m.col_indices.capacity());
  // Evenly spread: column k * cols / length, strictly ascending since length <= cols.
  for (std::int64_t k = 0; k < length; ++k) {
    m.col_indices.push_back(static_cast<ColIndex>(k * base.cols / length));
    m.values.push_back(base.values[0]);
  }
  m.col_indices.insert(m.col_indices.end(), base.col_indices.begin() + first_rest,
                       base.col_indices.end());
  m.values.insert(m.values.end(), base.values.begin() + first_rest, base.values.end());
  const auto shift = static_cast<RowOffset>(length) - static_cast<RowOffset>(first_rest);
  m.row_offsets.resize(base.row_offsets.size());
  m.row_offsets[0] = 0;
  for (std::size_t r = 1; r < base.row_offsets.size(); ++r)
    m.row_offsets[r] = base.row_offsets[r] + shift;
  return m;
}

CsrMatrix<double> blocked_sample(const CsrMatrix<double>& pattern, std::int64_t block_dim) {
  const std::int64_t b = block_dim;
  if (b < 1 || pattern.rows > kMaxDimension / std::max<std::int64_t>(b, 1) ||
      pattern.cols > kMaxDimension / std::max<std::int64_t>(b, 1))
    throw_invalid("blocked_sample: block_dim " + std::to_string(b) + " of a " +
                  std::to_string(pattern.rows) + " x " + std::to_string(pattern.cols) +
                  " pattern must be >= 1 and keep the dimensions within 2^31 - 1");
  CsrMatrix<double> m;
  m.rows = pattern.rows * b;
  m.cols = pattern.cols * b;
  m.row_offsets.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  m.col_indices.reserve(static_cast<std::size_t>(pattern.nnz() * b * b));
  m.values.reserve(static_cast<std::size_t>(pattern.nnz() * b * b));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t p = r / b;
    for (RowOffset k = pattern.row_offsets[static_cast<std::size_t>(p)];
         k < pattern.row_offsets[static_cast<std::size_t>(p + 1)]; ++k) {
      const std::int64_t first = pattern.col_indices[static_cast<std::size_t>(k)] * b;
      for (std::int64_t j = 0; j < b; ++j) {
        m.col_indices.push_back(static_cast<ColIndex>(first + j));
        m.values.push_back(pattern.values[static_cast<std::size_t>(k)]);
      }
    }
    m.row_offsets[static_cast<std::size_t>(r + 1)] = static_cast<RowOffset>(m.col_indices.size());
  }
  return m;
}

MatrixFeatures sample_features(const CsrMatrix<double>& m, bool count_blocks) {
  MatrixFeatures f;
  f.rows = m.rows;
  f.cols = m.cols;
  f.nnz = m.nnz();
  // The row lengths' histogram: one length (and a long row 0) in most samples, a spread of
  // them in the mixed-length bands (banded_mixed_length_sample).
  std::vector<std::int64_t> rows_of_length;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto length = static_cast<std::size_t>(m.row_length(r));
    if (length >= rows_of_length.size()) rows_of_length.resize(length + 1, 0);
    ++rows_of_length[length];
  }
  double square_sum = 0.0;
  bool shortest_seen = false;
  for (std::size_t length = 0; length < rows_of_length.size(); ++length) {
    const std::int64_t count = rows_of_length[length];
    if (count == 0) continue;
    const auto l = static_cast<std::int64_t>(length);
    if (!shortest_seen) f.row_length_min = l;
    shortest_seen = true;
    f.row_length_max = l;
    if (l == 0) {
      f.empty_rows = count;
    } else {
      f.distribution.push_back({.length = l, .rows = count});
    }
    square_sum += static_cast<double>(count) * static_cast<double>(l) * static_cast<double>(l);
  }
  f.row_length_mean = m.rows > 0 ? static_cast<double>(f.nnz) / static_cast<double>(m.rows) : 0.0;
  f.row_length_stddev = m.rows > 0 ? std::sqrt(std::max(square_sum / static_cast<double>(m.rows) -
                                                            f.row_length_mean * f.row_length_mean,
                                                        0.0))
                                   : 0.0;
  double span_sum = 0.0;  // over the rows that have entries; an empty row spans nothing
  for (std::int64_t r = 0; r < m.rows; ++r) {
    if (m.row_length(r) == 0) continue;
    const auto first = m.col_indices[static_cast<std::size_t>(m.row_offsets[r])];
    const auto last = m.col_indices[static_cast<std::size_t>(m.row_offsets[r + 1] - 1)];
    span_sum += static_cast<double>(last - first + 1) / static_cast<double>(m.cols);
  }
  f.mean_row_span_fraction = m.rows > 0 ? span_sum / static_cast<double>(m.rows) : 0.0;
  f.x_sectors_per_nonzero = x_sectors_per_nonzero(m);
  if (count_blocks)
    f.format_features.emplace("cusparse_bsr", FieldSet::of(compute_cusparse_bsr_features(m)));
  return f;
}

CsrMatrix<double> renumber_symmetric(const CsrMatrix<double>& m, std::uint64_t seed) {
  if (m.rows != m.cols)
    throw_invalid("renumber_symmetric: needs a square matrix, got " + std::to_string(m.rows) +
                  " x " + std::to_string(m.cols));
  std::vector<ColIndex> new_index(static_cast<std::size_t>(m.rows));
  std::iota(new_index.begin(), new_index.end(), ColIndex{0});
  std::mt19937_64 rng(seed);
  for (std::size_t i = new_index.size(); i > 1; --i)
    std::swap(new_index[i - 1],
              new_index[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
  std::vector<std::int64_t> old_row(new_index.size());
  for (std::size_t i = 0; i < new_index.size(); ++i)
    old_row[static_cast<std::size_t>(new_index[i])] = static_cast<std::int64_t>(i);
  CsrMatrix<double> out;
  out.rows = out.cols = m.rows;
  out.row_offsets.assign(static_cast<std::size_t>(m.rows) + 1, 0);
  out.col_indices.reserve(m.col_indices.size());
  out.values.reserve(m.values.size());
  std::vector<std::pair<ColIndex, double>> row;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t old = old_row[static_cast<std::size_t>(r)];
    row.clear();
    for (auto k = m.row_offsets[old]; k < m.row_offsets[old + 1]; ++k)
      row.emplace_back(new_index[static_cast<std::size_t>(m.col_indices[k])], m.values[k]);
    std::sort(row.begin(), row.end());
    for (const auto& [col, value] : row) {
      out.col_indices.push_back(col);
      out.values.push_back(value);
    }
    out.row_offsets[r + 1] = static_cast<RowOffset>(out.col_indices.size());
  }
  return out;
}

}  // namespace spmvd
