#include "kernels/formats/cuda_ehyb/ehyb_layout.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_ehyb/ehyb_partition.hpp"

namespace spmvd {
namespace {

// Offsets of column-major slices of kEhybSliceRows rows, each as wide as its first row (rows
// sorted by length, descending). lengths are in slice order.
std::vector<std::int64_t> slice_offsets_of(std::span<const std::int64_t> sorted_lengths) {
  std::vector<std::int64_t> offsets{0};
  for (std::size_t first = 0; first < sorted_lengths.size();
       first += static_cast<std::size_t>(kEhybSliceRows))
    offsets.push_back(offsets.back() + kEhybSliceRows * sorted_lengths[first]);
  return offsets;
}

}  // namespace

template <typename Value>
EhybLayout<Value> make_ehyb_layout(const CsrMatrix<double>& matrix,
                                   std::span<const std::int32_t> part_of_row,
                                   std::int32_t partitions) {
  if (matrix.rows != matrix.cols)
    throw_invalid("ehyb layout: the matrix is " + std::to_string(matrix.rows) + " x " +
                  std::to_string(matrix.cols) + "; EHYB reorders rows and columns together");
  if (matrix.rows >= std::numeric_limits<std::int32_t>::max())
    throw_invalid("ehyb layout: " + std::to_string(matrix.rows) + " rows need 64-bit indices");
  if (static_cast<std::int64_t>(part_of_row.size()) != matrix.rows)
    throw_invalid("ehyb layout: " + std::to_string(part_of_row.size()) + " part indices for " +
                  std::to_string(matrix.rows) + " rows");
  const std::int64_t n = matrix.rows;
  EhybLayout<Value> out;
  out.rows = n;
  out.partitions = partitions;

  // Alg. 1 lines 4-15: each row's entry count in its own part (cached) and outside it (ER).
  std::vector<std::int64_t> cached_length(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> er_length(static_cast<std::size_t>(n), 0);
  std::vector<std::int32_t> part_rows(static_cast<std::size_t>(partitions), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int32_t p = part_of_row[static_cast<std::size_t>(r)];
    if (p < 0 || p >= partitions)
      throw_invalid("ehyb layout: row " + std::to_string(r) + " is in part " + std::to_string(p) +
                    ", not in [0, " + std::to_string(partitions) + ")");
    ++part_rows[static_cast<std::size_t>(p)];
    for (RowOffset k = matrix.row_offsets[static_cast<std::size_t>(r)];
         k < matrix.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
      const auto c = static_cast<std::size_t>(matrix.col_indices[static_cast<std::size_t>(k)]);
      ++(part_of_row[c] == p ? cached_length : er_length)[static_cast<std::size_t>(r)];
    }
  }
  out.partition_row_begin.assign(static_cast<std::size_t>(partitions) + 1, 0);
  for (std::int32_t p = 0; p < partitions; ++p) {
    const std::int32_t size = part_rows[static_cast<std::size_t>(p)];
    if (size > kEhybMaxCacheEntries)
      throw_invalid("ehyb layout: part " + std::to_string(p) + " has " + std::to_string(size) +
                    " rows; its x slice must stay below " + std::to_string(kEhybMaxCacheEntries) +
                    " values for 16-bit local indices");
    out.cache_entries = std::max<std::int64_t>(out.cache_entries, size);
    out.partition_row_begin[static_cast<std::size_t>(p) + 1] =
        out.partition_row_begin[static_cast<std::size_t>(p)] + size;
  }

  // Alg. 1 lines 16-22: rows by part, then by cached length descending; ties keep the caller's
  // order, so the permutation is a function of the partition alone.
  out.permutation.resize(static_cast<std::size_t>(n));
  std::iota(out.permutation.begin(), out.permutation.end(), 0);
  std::stable_sort(out.permutation.begin(), out.permutation.end(),
                   [&](std::int32_t a, std::int32_t b) {
                     const std::int32_t pa = part_of_row[static_cast<std::size_t>(a)];
                     const std::int32_t pb = part_of_row[static_cast<std::size_t>(b)];
                     if (pa != pb) return pa < pb;
                     return cached_length[static_cast<std::size_t>(a)] >
                            cached_length[static_cast<std::size_t>(b)];
                   });
  out.new_index.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    out.new_index[static_cast<std::size_t>(out.permutation[static_cast<std::size_t>(i)])] =
        static_cast<std::int32_t>(i);

  // Alg. 1 line 27: slice offsets of the cached part, part by part (a slice never spans parts).
  out.partition_slice_begin.assign(static_cast<std::size_t>(partitions) + 1, 0);
  out.ell_slice_offsets = {0};
  for (std::int32_t p = 0; p < partitions; ++p) {
    const auto begin =
        static_cast<std::size_t>(out.partition_row_begin[static_cast<std::size_t>(p)]);
    const auto end =
        static_cast<std::size_t>(out.partition_row_begin[static_cast<std::size_t>(p) + 1]);
    std::vector<std::int64_t> lengths;
    lengths.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i)
      lengths.push_back(cached_length[static_cast<std::size_t>(out.permutation[i])]);
    const std::vector<std::int64_t> local = slice_offsets_of(lengths);
    const std::int64_t base = out.ell_slice_offsets.back();
    for (std::size_t s = 1; s < local.size(); ++s) out.ell_slice_offsets.push_back(base + local[s]);
    out.partition_slice_begin[static_cast<std::size_t>(p) + 1] =
        static_cast<std::int32_t>(out.ell_slice_offsets.size() - 1);
  }

  // Alg. 1 lines 16, 23-26: ER rows (rows with an entry outside their part) by ER length,
  // descending, ties in new-row order.
  std::vector<std::int32_t> er_order;  // ER row -> new row
  for (std::int64_t i = 0; i < n; ++i)
    if (er_length[static_cast<std::size_t>(out.permutation[static_cast<std::size_t>(i)])] > 0)
      er_order.push_back(static_cast<std::int32_t>(i));
  std::stable_sort(er_order.begin(), er_order.end(), [&](std::int32_t a, std::int32_t b) {
    return er_length[static_cast<std::size_t>(out.permutation[static_cast<std::size_t>(a)])] >
           er_length[static_cast<std::size_t>(out.permutation[static_cast<std::size_t>(b)])];
  });
  out.er_rows = static_cast<std::int64_t>(er_order.size());
  std::vector<std::int64_t> er_lengths;
  er_lengths.reserve(er_order.size());
  for (const std::int32_t i : er_order) {
    const std::int32_t row = out.permutation[static_cast<std::size_t>(i)];
    out.er_row_map.push_back(row);
    er_lengths.push_back(er_length[static_cast<std::size_t>(row)]);
  }
  out.er_slice_offsets = slice_offsets_of(er_lengths);

  // Alg. 2: every entry to its slot; slots no entry reaches stay padding.
  out.ell_local_columns.assign(static_cast<std::size_t>(out.ell_slots()), kEhybPaddingLocalColumn);
  out.ell_values.assign(static_cast<std::size_t>(out.ell_slots()), Value(0));
  out.er_columns.assign(static_cast<std::size_t>(out.er_slots()), kPaddingColumn);
  out.er_values.assign(static_cast<std::size_t>(out.er_slots()), Value(0));
  std::vector<std::int32_t> er_position(static_cast<std::size_t>(n), -1);  // ArrangeTable
  for (std::size_t e = 0; e < er_order.size(); ++e)
    er_position[static_cast<std::size_t>(out.er_row_map[e])] = static_cast<std::int32_t>(e);
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int32_t p = part_of_row[static_cast<std::size_t>(r)];
    const std::int64_t row = out.new_index[static_cast<std::size_t>(r)];
    const std::int64_t part_begin = out.partition_row_begin[static_cast<std::size_t>(p)];
    const std::int64_t local_row = row - part_begin;
    const std::int64_t ell_slice =
        out.partition_slice_begin[static_cast<std::size_t>(p)] + local_row / kEhybSliceRows;
    std::int64_t ell_slot =
        out.ell_slice_offsets[static_cast<std::size_t>(ell_slice)] + local_row % kEhybSliceRows;
    const std::int64_t er_row = er_position[static_cast<std::size_t>(r)];
    std::int64_t er_slot =
        er_row < 0 ? -1
                   : out.er_slice_offsets[static_cast<std::size_t>(er_row / kEhybSliceRows)] +
                         er_row % kEhybSliceRows;
    for (RowOffset k = matrix.row_offsets[static_cast<std::size_t>(r)];
         k < matrix.row_offsets[static_cast<std::size_t>(r + 1)]; ++k) {
      const ColIndex c = matrix.col_indices[static_cast<std::size_t>(k)];
      const auto value = static_cast<Value>(matrix.values[static_cast<std::size_t>(k)]);
      if (part_of_row[static_cast<std::size_t>(c)] == p) {
        out.ell_local_columns[static_cast<std::size_t>(ell_slot)] =
            static_cast<std::uint16_t>(out.new_index[static_cast<std::size_t>(c)] - part_begin);
        out.ell_values[static_cast<std::size_t>(ell_slot)] = value;
        ell_slot += kEhybSliceRows;
      } else {
        out.er_columns[static_cast<std::size_t>(er_slot)] = c;
        out.er_values[static_cast<std::size_t>(er_slot)] = value;
        er_slot += kEhybSliceRows;
      }
    }
  }
  return out;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

std::string ehyb_partition_kind(std::int32_t partitions) {
  return "metis_kway/" + std::to_string(partitions);
}

std::shared_ptr<const PlanPartition> ehyb_partition(const BuildSource& source,
                                                    std::int32_t partitions,
                                                    std::int64_t max_part_rows) {
  const CsrMatrix<double>& matrix = source.host();
  const std::string kind = ehyb_partition_kind(partitions);
  return source.partition(
      kind,
      [&](const PlanPartition& held) {
        return labels_problem(held, kind, matrix.rows, partitions, max_part_rows);
      },
      [&] {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::int32_t> part = partition_matrix_graph(matrix, partitions);
        spdlog::info("cuda_ehyb preprocessing: METIS cut {} rows into {} parts in {:.1f} ms",
                     matrix.rows, partitions, ms_since(start));
        return part;
      });
}

template <typename Value>
EhybLayout<Value> build_ehyb_layout(const CsrMatrix<double>& matrix,
                                    std::span<const std::int32_t> part_of_row,
                                    std::int32_t partitions) {
  const auto start = std::chrono::steady_clock::now();
  EhybLayout<Value> layout = make_ehyb_layout<Value>(matrix, part_of_row, partitions);
  const std::int64_t er_entries = std::count_if(layout.er_columns.begin(), layout.er_columns.end(),
                                                [](ColIndex c) { return c != kPaddingColumn; });
  spdlog::info(
      "cuda_ehyb preprocessing: {} rows, {} parts (cache {} values): layout {:.1f} ms; {} of {} "
      "entries ({:.1f} %) in ER",
      matrix.rows, partitions, layout.cache_entries, ms_since(start), er_entries, matrix.nnz(),
      matrix.nnz() > 0 ? 100.0 * static_cast<double>(er_entries) / static_cast<double>(matrix.nnz())
                       : 0.0);
  return layout;
}

template <typename Value>
EhybLayout<Value> build_ehyb_layout(const CsrMatrix<double>& matrix, std::int32_t partitions) {
  const std::vector<std::int32_t> part = partition_matrix_graph(matrix, partitions);
  return build_ehyb_layout<Value>(matrix, part, partitions);
}

template EhybLayout<float> make_ehyb_layout<float>(const CsrMatrix<double>&,
                                                   std::span<const std::int32_t>, std::int32_t);
template EhybLayout<double> make_ehyb_layout<double>(const CsrMatrix<double>&,
                                                     std::span<const std::int32_t>, std::int32_t);
template EhybLayout<float> build_ehyb_layout<float>(const CsrMatrix<double>&,
                                                    std::span<const std::int32_t>, std::int32_t);
template EhybLayout<double> build_ehyb_layout<double>(const CsrMatrix<double>&,
                                                      std::span<const std::int32_t>, std::int32_t);
template EhybLayout<float> build_ehyb_layout<float>(const CsrMatrix<double>&, std::int32_t);
template EhybLayout<double> build_ehyb_layout<double>(const CsrMatrix<double>&, std::int32_t);

}  // namespace spmvd
