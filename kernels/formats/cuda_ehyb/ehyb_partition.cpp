#include "kernels/formats/cuda_ehyb/ehyb_partition.hpp"

#include <metis.h>

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace spmvd {

SymmetricGraph symmetrised_pattern(const CsrMatrix<double>& matrix) {
  if (matrix.rows != matrix.cols)
    throw_invalid("ehyb partition: the matrix is " + std::to_string(matrix.rows) + " x " +
                  std::to_string(matrix.cols) + "; its graph needs a square matrix");
  if (2 * static_cast<std::int64_t>(matrix.col_indices.size()) >
      std::numeric_limits<std::int32_t>::max())
    throw_invalid("ehyb partition: " + std::to_string(matrix.col_indices.size()) +
                  " entries give more than 2^31 directed edges (METIS's idx_t is 32-bit)");
  const auto n = static_cast<std::size_t>(matrix.rows);
  // Each off-diagonal entry (r, c) is an edge r-c seen from both ends; duplicates (an entry and
  // its transpose) are removed per vertex after sorting.
  std::vector<std::int32_t> degree(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r)
    for (RowOffset k = matrix.row_offsets[r]; k < matrix.row_offsets[r + 1]; ++k) {
      const auto c = static_cast<std::size_t>(matrix.col_indices[static_cast<std::size_t>(k)]);
      if (c == r) continue;
      ++degree[r + 1];
      ++degree[c + 1];
    }
  std::vector<std::int32_t> start(degree);
  for (std::size_t v = 0; v < n; ++v) start[v + 1] += start[v];
  std::vector<std::int32_t> neighbours(static_cast<std::size_t>(start[n]));
  std::vector<std::int32_t> fill(start.begin(), start.end() - 1);
  for (std::size_t r = 0; r < n; ++r)
    for (RowOffset k = matrix.row_offsets[r]; k < matrix.row_offsets[r + 1]; ++k) {
      const auto c = matrix.col_indices[static_cast<std::size_t>(k)];
      if (static_cast<std::size_t>(c) == r) continue;
      neighbours[static_cast<std::size_t>(fill[r]++)] = c;
      neighbours[static_cast<std::size_t>(fill[static_cast<std::size_t>(c)]++)] =
          static_cast<std::int32_t>(r);
    }
  SymmetricGraph graph;
  graph.offsets.assign(n + 1, 0);
  graph.adjacency.reserve(neighbours.size());
  for (std::size_t v = 0; v < n; ++v) {
    const auto first = neighbours.begin() + start[v], last = neighbours.begin() + start[v + 1];
    std::sort(first, last);
    graph.adjacency.insert(graph.adjacency.end(), first, std::unique(first, last));
    graph.offsets[v + 1] = static_cast<std::int32_t>(graph.adjacency.size());
  }
  return graph;
}

namespace {

// Rows cut into `parts` contiguous blocks of (nearly) equal size.
std::vector<std::int32_t> contiguous_blocks(std::int64_t rows, std::int32_t parts) {
  std::vector<std::int32_t> part(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r)
    part[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r * parts / rows);
  return part;
}

}  // namespace

std::vector<std::int32_t> partition_matrix_graph(const CsrMatrix<double>& matrix,
                                                 std::int32_t parts) {
  if (parts < 1 || parts > matrix.rows)
    throw_invalid("ehyb partition: " + std::to_string(parts) + " parts for " +
                  std::to_string(matrix.rows) + " rows (need 1 <= parts <= rows)");
  SymmetricGraph graph = symmetrised_pattern(matrix);
  if (parts == 1 || graph.adjacency.empty()) return contiguous_blocks(matrix.rows, parts);

  static_assert(sizeof(idx_t) == sizeof(std::int32_t), "Debian's METIS is built with 32-bit idx_t");
  idx_t vertices = static_cast<idx_t>(matrix.rows);
  idx_t constraints = 1;
  idx_t nparts = parts;
  idx_t cut = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = kEhybMetisSeed;
  options[METIS_OPTION_UFACTOR] = kEhybMetisUfactor;
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<std::int32_t> part(static_cast<std::size_t>(matrix.rows), 0);
  // Unit vertex weights: a part's size is its x slice, the cache it must fit (Eq. 1).
  const int status = METIS_PartGraphKway(&vertices, &constraints, graph.offsets.data(),
                                         graph.adjacency.data(), nullptr, nullptr, nullptr, &nparts,
                                         nullptr, nullptr, options, &cut, part.data());
  if (status != METIS_OK)
    throw Error(ErrorCode::internal,
                "ehyb partition: METIS_PartGraphKway returned " + std::to_string(status) + " for " +
                    std::to_string(matrix.rows) + " vertices, " + std::to_string(parts) + " parts");
  return part;
}

}  // namespace spmvd
