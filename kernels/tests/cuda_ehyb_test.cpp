// cuda_ehyb (paper 002) on the host: the symmetrised graph, METIS's partition (deterministic),
// the layout's bookkeeping on hand-made matrices, a host multiply over the built arrays (the
// cached kernel's and the ER kernel's loops, line for line) against the CSR reference on
// random matrices, and the rules (Eq. 1 sizing, candidates, device bytes, stored plans, bad
// parameters). Kernel results on the GPU: kernels_conformance_gpu.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/formats/common/sell_layout.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_features.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_rules.hpp"
#include "kernels/formats/cuda_ehyb/ehyb_layout.hpp"
#include "kernels/formats/cuda_ehyb/ehyb_partition.hpp"
#include "kernels/tests/hand_written.hpp"
#include "kernels/tests/test_matrices.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::uint64_t seed_from_env() {
  if (const char* text = std::getenv("SPMVD_TEST_SEED")) return std::strtoull(text, nullptr, 10);
  return 20261123;
}

CsrMatrix<double> from_triplets(
    std::int64_t n, std::vector<std::tuple<std::int32_t, std::int32_t, double>> entries) {
  std::sort(entries.begin(), entries.end());
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

// Two 4-cliques {0..3} and {4..7} (diagonal included) joined by the edge 3-4: the cut of one
// edge is the only minimum bisection.
CsrMatrix<double> two_cliques() {
  std::vector<std::tuple<std::int32_t, std::int32_t, double>> entries;
  double v = 1;
  for (std::int32_t base : {0, 4})
    for (std::int32_t r = base; r < base + 4; ++r)
      for (std::int32_t c = base; c < base + 4; ++c) entries.emplace_back(r, c, v++);
  entries.emplace_back(3, 4, 100.0);
  entries.emplace_back(4, 3, 200.0);
  return from_triplets(8, entries);
}

// Square, n rows, each with a diagonal entry, a few near neighbours (a banded part METIS can
// keep inside parts) and with probability `far` an entry anywhere (ER entries).
CsrMatrix<double> random_square(std::int64_t n, double far, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int32_t> near(-6, 6);
  std::uniform_int_distribution<std::int32_t> any(0, static_cast<std::int32_t>(n - 1));
  std::uniform_int_distribution<int> count(0, 7);
  std::uniform_real_distribution<double> value(-1.0, 1.0), coin(0.0, 1.0);
  CsrMatrix<double> m{n, n, {0}, {}, {}};
  for (std::int64_t r = 0; r < n; ++r) {
    std::set<std::int32_t> cols;
    if (coin(rng) < 0.9) cols.insert(static_cast<std::int32_t>(r));  // some rows lack it
    for (int k = count(rng); k > 0; --k) {
      const auto c = static_cast<std::int32_t>(r) + near(rng);
      if (c >= 0 && c < n) cols.insert(c);
    }
    while (coin(rng) < far) cols.insert(any(rng));
    if (r % 97 == 5) cols.clear();  // empty rows
    for (const std::int32_t c : cols) {
      m.col_indices.push_back(c);
      m.values.push_back(value(rng));
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

// y = A x over the built arrays, as the operator's three launches compute it (cached part: the
// part's x slice gathered through the permutation, 16-bit local columns, stop at padding, write
// to y in the new order; then ER: caller's columns, add to the new row of er_row_map[i]; then y
// gathered back into the caller's order). Checks each local column against the part's size while
// it goes.
template <typename Value>
std::vector<double> multiply_over_layout(const EhybLayout<Value>& layout,
                                         const std::vector<double>& x) {
  std::vector<double> y_new(static_cast<std::size_t>(layout.rows),
                            std::numeric_limits<double>::quiet_NaN());
  for (std::int32_t p = 0; p < layout.partitions; ++p) {
    const std::int32_t begin = layout.partition_row_begin[p];
    const std::int32_t size = layout.partition_row_begin[p + 1] - begin;
    EXPECT_LE(size, layout.cache_entries);
    std::vector<double> cache(static_cast<std::size_t>(size));
    for (std::int32_t i = 0; i < size; ++i) cache[i] = x[layout.permutation[begin + i]];
    for (std::int32_t s = layout.partition_slice_begin[p]; s < layout.partition_slice_begin[p + 1];
         ++s) {
      for (std::int32_t lane = 0; lane < kEhybSliceRows; ++lane) {
        const std::int32_t local_row = (s - layout.partition_slice_begin[p]) * 32 + lane;
        double sum = 0;
        for (std::int64_t slot = layout.ell_slice_offsets[s] + lane;
             slot < layout.ell_slice_offsets[s + 1]; slot += kEhybSliceRows) {
          const std::uint16_t col = layout.ell_local_columns[slot];
          if (col == kEhybPaddingLocalColumn) break;
          EXPECT_LT(local_row, size) << "an entry in a padding row of part " << p;
          EXPECT_LT(col, size) << "local column outside part " << p << "'s x slice";
          sum += static_cast<double>(layout.ell_values[slot]) * cache[col];
        }
        if (local_row < size) y_new[begin + local_row] = sum;
      }
    }
  }
  for (std::int64_t i = 0; i < layout.er_rows; ++i) {
    double sum = 0;
    for (std::int64_t slot = layout.er_slice_offsets[i / 32] + i % 32;
         slot < layout.er_slice_offsets[i / 32 + 1]; slot += kEhybSliceRows) {
      const ColIndex col = layout.er_columns[slot];
      if (col == kPaddingColumn) break;
      sum += static_cast<double>(layout.er_values[slot]) * x[col];
    }
    y_new[layout.new_index[layout.er_row_map[i]]] += sum;
  }
  std::vector<double> y(static_cast<std::size_t>(layout.rows));
  for (std::size_t row = 0; row < y.size(); ++row) y[row] = y_new[layout.new_index[row]];
  return y;
}

// Every entry (caller's row, column, value) in the layout, each once: from the cached part
// (local column + the part's first new index, mapped back) and from ER.
template <typename Value>
std::multiset<std::tuple<std::int32_t, std::int32_t, double>> entries_of(
    const EhybLayout<Value>& layout) {
  std::multiset<std::tuple<std::int32_t, std::int32_t, double>> out;
  for (std::int32_t p = 0; p < layout.partitions; ++p) {
    const std::int32_t begin = layout.partition_row_begin[p];
    for (std::int32_t s = layout.partition_slice_begin[p]; s < layout.partition_slice_begin[p + 1];
         ++s)
      for (std::int64_t slot = layout.ell_slice_offsets[s]; slot < layout.ell_slice_offsets[s + 1];
           ++slot) {
        const std::uint16_t col = layout.ell_local_columns[slot];
        if (col == kEhybPaddingLocalColumn) continue;
        const std::int64_t lane = (slot - layout.ell_slice_offsets[s]) % 32;
        const std::int64_t row = begin + (s - layout.partition_slice_begin[p]) * 32 + lane;
        out.emplace(layout.permutation[row], layout.permutation[begin + col],
                    static_cast<double>(layout.ell_values[slot]));
      }
  }
  for (std::int64_t s = 0; s + 1 < static_cast<std::int64_t>(layout.er_slice_offsets.size()); ++s)
    for (std::int64_t slot = layout.er_slice_offsets[s]; slot < layout.er_slice_offsets[s + 1];
         ++slot) {
      const ColIndex col = layout.er_columns[slot];
      if (col == kPaddingColumn) continue;
      const std::int64_t er_row = s * 32 + (slot - layout.er_slice_offsets[s]) % 32;
      out.emplace(layout.er_row_map[er_row], col, static_cast<double>(layout.er_values[slot]));
    }
  return out;
}

std::multiset<std::tuple<std::int32_t, std::int32_t, double>> entries_of(
    const CsrMatrix<double>& m) {
  std::multiset<std::tuple<std::int32_t, std::int32_t, double>> out;
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      out.emplace(static_cast<std::int32_t>(r), m.col_indices[k], m.values[k]);
  return out;
}

// What the operator holds on the device for the layout: its arrays, and y in the new order.
template <typename Value>
std::uint64_t layout_bytes(const EhybLayout<Value>& l) {
  return 4 * (l.permutation.size() + l.new_index.size() + l.partition_row_begin.size() +
              l.partition_slice_begin.size() + l.er_row_map.size() + l.er_columns.size()) +
         8 * (l.ell_slice_offsets.size() + l.er_slice_offsets.size()) +
         2 * l.ell_local_columns.size() +
         sizeof(Value) *
             (l.ell_values.size() + l.er_values.size() + static_cast<std::size_t>(l.rows));
}

// ---------------------------------------------------------------------------------------------
// The graph and the partition

TEST(EhybPartition, SymmetrisedPatternIsAPlusATransposeWithoutDiagonal) {
  // [1 1 . .]   edges 0-1, 2-0 (entry (2,0) only), 3-3 dropped, 1-3 (entry (1,3) only)
  // [. 1 . 1]
  // [1 . . .]
  // [. . . 1]
  const CsrMatrix<double> m =
      from_triplets(4, {{0, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 3, 1}, {2, 0, 1}, {3, 3, 1}});
  const SymmetricGraph g = symmetrised_pattern(m);
  EXPECT_THAT(g.offsets, ElementsAre(0, 2, 4, 5, 6));
  EXPECT_THAT(g.adjacency, ElementsAre(1, 2, 0, 3, 0, 1));
}

TEST(EhybPartition, CutsTwoCliquesAtTheirBridge) {
  const std::vector<std::int32_t> part = partition_matrix_graph(two_cliques(), 2);
  ASSERT_EQ(part.size(), 8u);
  for (int v = 1; v < 4; ++v) EXPECT_EQ(part[v], part[0]);
  for (int v = 5; v < 8; ++v) EXPECT_EQ(part[v], part[4]);
  EXPECT_NE(part[0], part[4]);
}

TEST(EhybPartition, SameStructureGivesTheSamePartition) {
  std::mt19937_64 rng(seed_from_env());
  const CsrMatrix<double> m = random_square(5000, 0.05, rng);
  CsrMatrix<double> other_values = m;
  for (double& v : other_values.values) v = -2 * v;
  const std::vector<std::int32_t> first = partition_matrix_graph(m, 24);
  EXPECT_EQ(partition_matrix_graph(m, 24), first);
  EXPECT_EQ(partition_matrix_graph(other_values, 24), first);  // values do not enter
  EXPECT_EQ(layout_bytes(make_ehyb_layout<double>(m, first, 24)),
            layout_bytes(build_ehyb_layout<double>(m, 24)));
}

TEST(EhybPartition, RejectsPartCountsOutsideTheRows) {
  EXPECT_THROW(partition_matrix_graph(two_cliques(), 0), Error);
  EXPECT_THROW(partition_matrix_graph(two_cliques(), 9), Error);
  const CsrMatrix<double> wide{2, 3, {0, 1, 2}, {0, 2}, {1, 1}};
  try {
    symmetrised_pattern(wide);
    FAIL() << "a 2 x 3 matrix has no graph";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("2 x 3"));
  }
}

TEST(EhybPartition, GraphWithoutEdgesIsCutIntoContiguousBlocks) {
  const CsrMatrix<double> diagonal = from_triplets(6, {{0, 0, 1}, {2, 2, 1}, {5, 5, 1}});
  EXPECT_THAT(partition_matrix_graph(diagonal, 3), ElementsAre(0, 0, 1, 1, 2, 2));
}

// ---------------------------------------------------------------------------------------------
// The layout

// A worked example with a given partition (no METIS), checked slot by slot.
//   row 0: (0,0)=1 (0,1)=2 (0,2)=3        part 0 = rows {0, 1}, part 1 = rows {2, 3}
//   row 1: (1,1)=4
//   row 2: (2,2)=5 (2,3)=6 (2,0)=7
//   row 3: (3,3)=8
// Cached lengths: row0 2 (cols 0,1), row1 1, row2 2 (cols 2,3), row3 1; ER: row0 col 2, row2
// col 0. Part 0 keeps order {0, 1}, part 1 {2, 3}: permutation is the identity.
TEST(EhybLayout, WorkedExampleSlotBySlot) {
  const CsrMatrix<double> m = from_triplets(
      4, {{0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {1, 1, 4}, {2, 2, 5}, {2, 3, 6}, {2, 0, 7}, {3, 3, 8}});
  const std::vector<std::int32_t> part{0, 0, 1, 1};
  const EhybLayout<double> l = make_ehyb_layout<double>(m, part, 2);
  EXPECT_EQ(l.cache_entries, 2);
  EXPECT_THAT(l.permutation, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(l.partition_row_begin, ElementsAre(0, 2, 4));
  EXPECT_THAT(l.partition_slice_begin, ElementsAre(0, 1, 2));
  EXPECT_THAT(l.ell_slice_offsets, ElementsAre(0, 64, 128));  // each slice 2 wide
  constexpr std::uint16_t pad = kEhybPaddingLocalColumn;
  // Slice 0: lane 0 = row 0 (local cols 0, 1), lane 1 = row 1 (local col 1).
  EXPECT_EQ(l.ell_local_columns[0], 0);
  EXPECT_EQ(l.ell_local_columns[32], 1);
  EXPECT_EQ(l.ell_local_columns[1], 1);
  EXPECT_EQ(l.ell_local_columns[33], pad);
  EXPECT_EQ(l.ell_values[0], 1);
  EXPECT_EQ(l.ell_values[32], 2);
  EXPECT_EQ(l.ell_values[1], 4);
  // Slice 1: row 2 (local cols 0, 1: columns 2, 3), row 3 (local col 1: column 3).
  EXPECT_EQ(l.ell_local_columns[64], 0);
  EXPECT_EQ(l.ell_local_columns[96], 1);
  EXPECT_EQ(l.ell_local_columns[65], 1);
  EXPECT_EQ(l.ell_values[65], 8);
  EXPECT_EQ(std::count(l.ell_local_columns.begin(), l.ell_local_columns.end(), pad), 128 - 6);
  // ER: rows 0 and 2, one entry each, in the caller's order.
  EXPECT_EQ(l.er_rows, 2);
  EXPECT_THAT(l.er_row_map, ElementsAre(0, 2));
  EXPECT_THAT(l.er_slice_offsets, ElementsAre(0, 32));
  EXPECT_EQ(l.er_columns[0], 2);
  EXPECT_EQ(l.er_values[0], 3);
  EXPECT_EQ(l.er_columns[1], 0);
  EXPECT_EQ(l.er_values[1], 7);
  EXPECT_EQ(std::count(l.er_columns.begin(), l.er_columns.end(), kPaddingColumn), 30);
}

TEST(EhybLayout, RowsSortByCachedLengthWithinTheirPart) {
  // Part 0 = rows {0, 2}, part 1 = rows {1, 3}; row 2 is longer than row 0, row 3 than row 1.
  const CsrMatrix<double> m =
      from_triplets(4, {{0, 0, 1}, {1, 1, 1}, {2, 0, 1}, {2, 2, 1}, {3, 1, 1}, {3, 3, 1}});
  const EhybLayout<float> l = make_ehyb_layout<float>(m, std::vector<std::int32_t>{0, 1, 0, 1}, 2);
  EXPECT_THAT(l.permutation, ElementsAre(2, 0, 3, 1));
  EXPECT_THAT(l.new_index, ElementsAre(1, 3, 0, 2)) << "the caller's row 0 is new row 1, ...";
  EXPECT_EQ(l.er_rows, 0);
  EXPECT_THAT(l.er_slice_offsets, ElementsAre(0));
}

TEST(EhybLayout, TwoCliquesPutOnlyTheBridgeInExtraRows) {
  const CsrMatrix<double> m = two_cliques();
  const EhybLayout<double> l = build_ehyb_layout<double>(m, 2);
  EXPECT_EQ(l.cache_entries, 4);
  EXPECT_EQ(entries_of(l), entries_of(m));  // every entry exactly once
  EXPECT_EQ(l.er_rows, 2);
  EXPECT_THAT(std::set<std::int32_t>(l.er_row_map.begin(), l.er_row_map.end()), ElementsAre(3, 4));
  EXPECT_EQ(std::count_if(l.er_columns.begin(), l.er_columns.end(),
                          [](ColIndex c) { return c != kPaddingColumn; }),
            2);
}

TEST(EhybLayout, RejectsAPartBeyondSixteenBitIndices) {
  const std::int64_t n = kEhybMaxCacheEntries + 1;
  CsrMatrix<double> m{n, n, std::vector<RowOffset>(static_cast<std::size_t>(n) + 1, 0), {}, {}};
  const std::vector<std::int32_t> one_part(static_cast<std::size_t>(n), 0);
  try {
    make_ehyb_layout<double>(m, one_part, 1);
    FAIL() << "a part of 65536 rows does not fit 16-bit local indices";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("part 0 has 65536 rows"));
  }
}

// Bookkeeping, permutation round trip and the host multiply on random matrices, through METIS
// and through a random partition (most entries in ER), both precisions.
template <typename Value>
void check_random_layouts(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (const std::int64_t n : {64, 257, 3000}) {
    for (const double far : {0.0, 0.3}) {
      const CsrMatrix<double> m = random_square(n, far, rng);
      const std::int32_t parts = static_cast<std::int32_t>(std::max<std::int64_t>(n / 100, 1));
      std::uniform_int_distribution<std::int32_t> any_part(0, parts - 1);
      std::vector<std::int32_t> random_part(static_cast<std::size_t>(n));
      for (std::int32_t& p : random_part) p = any_part(rng);
      for (const bool metis : {true, false}) {
        SCOPED_TRACE("n=" + std::to_string(n) + " far=" + std::to_string(far) +
                     (metis ? " METIS" : " random parts") + " " + std::to_string(sizeof(Value)));
        const EhybLayout<Value> l = metis ? build_ehyb_layout<Value>(m, parts)
                                          : make_ehyb_layout<Value>(m, random_part, parts);
        // The permutation is a bijection and each part owns its contiguous range.
        std::vector<std::int32_t> sorted = l.permutation;
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::int32_t> identity(static_cast<std::size_t>(n));
        std::iota(identity.begin(), identity.end(), 0);
        ASSERT_EQ(sorted, identity);
        ASSERT_EQ(l.partition_row_begin.back(), n);
        // Every entry in exactly one of the two parts (values as the layout rounds them); ER
        // rows distinct.
        CsrMatrix<double> rounded = m;
        for (double& v : rounded.values) v = static_cast<double>(static_cast<Value>(v));
        EXPECT_EQ(entries_of(l), entries_of(rounded));
        EXPECT_EQ(std::set<std::int32_t>(l.er_row_map.begin(), l.er_row_map.end()).size(),
                  l.er_row_map.size());
        // Local indices below the cache size.
        for (const std::uint16_t c : l.ell_local_columns)
          if (c != kEhybPaddingLocalColumn) EXPECT_LT(c, l.cache_entries);
        // The multiply.
        std::uniform_real_distribution<double> value(-1.0, 1.0);
        std::vector<double> x(static_cast<std::size_t>(n));
        for (double& v : x) v = static_cast<double>(static_cast<Value>(value(rng)));
        std::vector<double> expected(static_cast<std::size_t>(n), 0.0);
        reference_spmv(rounded, x.data(), expected.data(), 1.0, 0.0);
        const std::vector<double> got = multiply_over_layout(l, x);
        for (std::int64_t r = 0; r < n; ++r)
          ASSERT_NEAR(got[r], expected[r], 1e-12 * (1 + std::abs(expected[r]))) << "row " << r;
        // The rules' device bytes bound what build() would allocate.
        const MatrixFeatures f = extract_features(m);
        const Candidate c{.format = kCudaEhybFormatId,
                          .params = FieldSet::of(CudaEhybParams{
                              .partitions = static_cast<std::uint32_t>(parts), .variant = 0}),
                          .launch = {}};
        EXPECT_LE(layout_bytes(l), CudaEhybRules{}.device_bytes(f, precision_of<Value>(), c));
      }
    }
  }
}

// Issue 16: the partition a plan carries is used by the build instead of running METIS again.
// The stored partition here is deliberately not METIS's (contiguous blocks of rows, a valid
// partition), so a build that recomputed would give another layout; y is still the caller's.
TEST(EhybPartition, AStoredPartitionIsUsedInsteadOfMetis) {
  std::mt19937_64 rng(seed_from_env());
  const CsrMatrix<double> m = random_square(3000, 0.05, rng);
  const std::int32_t parts = 30;
  const auto device = make_cpu_device();
  const BuildSource source(m, *device);
  std::vector<std::int32_t> blocks(static_cast<std::size_t>(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r)
    blocks[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r * parts / m.rows);
  ASSERT_NE(blocks, partition_matrix_graph(m, parts));
  const auto stored =
      std::make_shared<const PlanPartition>(PlanPartition{ehyb_partition_kind(parts), blocks});
  source.offer_partition(stored);

  const std::shared_ptr<const PlanPartition> used =
      ehyb_partition(source, parts, kEhybMaxCacheEntries);
  EXPECT_EQ(used, stored);  // the same object: METIS did not run
  EXPECT_EQ(used->kind, "metis_kway/30");
  const EhybLayout<double> l = build_ehyb_layout<double>(m, used->entries, parts);
  EXPECT_EQ(l.permutation, make_ehyb_layout<double>(m, blocks, parts).permutation);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(m.cols));
  for (double& v : x) v = value(rng);
  std::vector<double> expected(static_cast<std::size_t>(m.rows), 0.0);
  reference_spmv(m, x.data(), expected.data(), 1.0, 0.0);
  const std::vector<double> got = multiply_over_layout(l, x);
  for (std::int64_t r = 0; r < m.rows; ++r)
    ASSERT_NEAR(got[r], expected[r], 1e-12 * (1 + std::abs(expected[r]))) << "row " << r;
}

// A build handed the partition an earlier build computed builds exactly what that build did;
// the candidates of one part count built from one source share one METIS run.
TEST(EhybPartition, AStoredMetisPartitionBuildsTheSameLayoutAsComputingIt) {
  std::mt19937_64 rng(seed_from_env());
  const CsrMatrix<double> m = random_square(3000, 0.05, rng);
  const auto device = make_cpu_device();
  const BuildSource computing(m, *device);
  const std::shared_ptr<const PlanPartition> computed =
      ehyb_partition(computing, 30, kEhybMaxCacheEntries);
  EXPECT_EQ(computed->entries, partition_matrix_graph(m, 30));
  EXPECT_EQ(ehyb_partition(computing, 30, kEhybMaxCacheEntries), computed);
  EXPECT_NE(ehyb_partition(computing, 60, kEhybMaxCacheEntries)->entries, computed->entries);

  const BuildSource loading(m, *device);
  loading.offer_partition(std::make_shared<const PlanPartition>(*computed));  // a stored copy
  const std::shared_ptr<const PlanPartition> loaded =
      ehyb_partition(loading, 30, kEhybMaxCacheEntries);
  const EhybLayout<double> a = build_ehyb_layout<double>(m, computed->entries, 30);
  const EhybLayout<double> b = build_ehyb_layout<double>(m, loaded->entries, 30);
  EXPECT_EQ(b.permutation, a.permutation);
  EXPECT_EQ(b.ell_slice_offsets, a.ell_slice_offsets);
  EXPECT_EQ(b.ell_local_columns, a.ell_local_columns);
  EXPECT_EQ(b.ell_values, a.ell_values);
  EXPECT_EQ(b.er_row_map, a.er_row_map);
  EXPECT_EQ(b.er_columns, a.er_columns);
}

// A stored partition of another part count, with a label out of range, of another length, or
// with a part the build's x cache cannot hold is not used: METIS runs and its cut is used.
TEST(EhybPartition, AnInvalidStoredPartitionIsReplacedByMetis) {
  std::mt19937_64 rng(seed_from_env());
  const CsrMatrix<double> m = random_square(1000, 0.05, rng);
  const std::int32_t parts = 10;
  const std::vector<std::int32_t> metis = partition_matrix_graph(m, parts);
  std::vector<std::int32_t> out_of_range = metis;
  out_of_range[7] = parts;
  std::vector<std::int32_t> short_labels = metis;
  short_labels.pop_back();
  const std::vector<std::int32_t> one_part(static_cast<std::size_t>(m.rows), 0);  // 1000 rows
  const std::vector<PlanPartition> bad{{ehyb_partition_kind(parts), out_of_range},
                                       {ehyb_partition_kind(parts), short_labels},
                                       {ehyb_partition_kind(parts), one_part},
                                       {ehyb_partition_kind(parts + 1), metis}};
  const auto device = make_cpu_device();
  for (const PlanPartition& partition : bad) {
    SCOPED_TRACE(partition.kind);
    const BuildSource source(m, *device);
    const auto stored = std::make_shared<const PlanPartition>(partition);
    source.offer_partition(stored);
    const std::shared_ptr<const PlanPartition> used = ehyb_partition(source, parts, 200);
    EXPECT_NE(used, stored);
    EXPECT_EQ(used->entries, metis);
  }
  EXPECT_EQ(labels_problem(bad[0], "metis_kway/10", m.rows, parts, 200),
            "row 7 is in part 10, outside 0..9");
  EXPECT_EQ(labels_problem(bad[2], "metis_kway/10", m.rows, parts, 200),
            "part 0 has more than 200 rows");
}

TEST(EhybLayout, HostMultiplyOverTheArraysMatchesCsrOnRandomMatrices) {
  const std::uint64_t seed = seed_from_env();
  std::cout << "cuda_ehyb random layouts: seed " << seed << " (set SPMVD_TEST_SEED to repeat)\n";
  check_random_layouts<double>(seed);
  check_random_layouts<float>(seed + 1);
}

// The GPU conformance test's matrices with every candidate an H100 would get: the layouts the
// GPU kernels will read multiply right on the host and stay within the rules' bytes, so a
// kernels_conformance_gpu failure on cuda_ehyb is a kernel's, not a layout's.
TEST(EhybLayout, ConformanceMatricesLayoutsMultiplyRightForEveryH100Candidate) {
  const std::uint64_t seed = testing::test_seed();
  std::cout << "cuda_ehyb on the conformance matrices: seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  const CudaEhybRules rules;
  int offered = 0;
  for (const testing::NamedMatrix& named : testing::conformance_matrices(seed)) {
    const MatrixFeatures f = extract_features(named.matrix);
    const std::vector<Candidate> all = rules.candidates(f, testing::h100());
    std::cout << "  " << named.name << ": " << all.size() << " candidates";
    for (const Candidate& c : all) {
      const CudaEhybParams p = CudaEhybRules::params_of(c);
      std::cout << " (" << p.partitions << " parts, variant " << p.variant << ", block "
                << c.launch.block_size << ", grid " << c.launch.grid_size << ")";
      SCOPED_TRACE(named.name + " parts " + std::to_string(p.partitions));
      ASSERT_NO_THROW(CudaEhybRules::check_params(p, named.matrix.rows));
      const EhybLayout<double> l =
          build_ehyb_layout<double>(named.matrix, static_cast<std::int32_t>(p.partitions));
      const std::int64_t buffers = p.variant == 1 ? 2 : 1;
      EXPECT_LE(l.cache_entries, CudaEhybRules::cache_capacity(testing::h100(), 8, buffers));
      EXPECT_LE(layout_bytes(l), rules.device_bytes(f, Precision::fp64, c));
      std::uniform_real_distribution<double> value(-1.0, 1.0);
      std::vector<double> x(static_cast<std::size_t>(named.matrix.cols));
      for (double& v : x) v = value(rng);
      std::vector<double> expected(static_cast<std::size_t>(named.matrix.rows), 0.0);
      reference_spmv(named.matrix, x.data(), expected.data(), 1.0, 0.0);
      const std::vector<double> got = multiply_over_layout(l, x);
      for (std::int64_t r = 0; r < named.matrix.rows; ++r)
        ASSERT_NEAR(got[r], expected[r], 1e-12 * (1 + std::abs(expected[r]))) << "row " << r;
    }
    std::cout << "\n";
    offered += all.empty() ? 0 : 1;
  }
  EXPECT_GE(offered, 3);  // the 200-row square, the dense 64 x 64 and the band at least
}

// ---------------------------------------------------------------------------------------------
// The neighbourhood growth

CsrMatrix<double> grid_5_point(std::int64_t side) {
  std::vector<std::tuple<std::int32_t, std::int32_t, double>> entries;
  for (std::int64_t i = 0; i < side; ++i)
    for (std::int64_t j = 0; j < side; ++j) {
      const auto r = static_cast<std::int32_t>(i * side + j);
      entries.emplace_back(r, r, 4.0);
      if (i > 0) entries.emplace_back(r, r - side, -1.0);
      if (i + 1 < side) entries.emplace_back(r, r + side, -1.0);
      if (j > 0) entries.emplace_back(r, r - 1, -1.0);
      if (j + 1 < side) entries.emplace_back(r, r + 1, -1.0);
    }
  return from_triplets(side * side, entries);
}

CsrMatrix<double> renumbered(const CsrMatrix<double>& m, std::mt19937_64& rng) {
  std::vector<std::int32_t> to(static_cast<std::size_t>(m.rows));
  std::iota(to.begin(), to.end(), 0);
  std::shuffle(to.begin(), to.end(), rng);
  std::vector<std::tuple<std::int32_t, std::int32_t, double>> entries;
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (RowOffset k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k)
      entries.emplace_back(to[r], to[m.col_indices[k]], m.values[k]);
  return from_triplets(m.rows, entries);
}

CsrMatrix<double> random_pattern(std::int64_t n, int per_row, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int32_t> any(0, static_cast<std::int32_t>(n - 1));
  std::vector<std::tuple<std::int32_t, std::int32_t, double>> entries;
  for (std::int64_t r = 0; r < n; ++r) {
    std::set<std::int32_t> cols;
    while (static_cast<int>(cols.size()) < per_row) cols.insert(any(rng));
    for (const std::int32_t c : cols) entries.emplace_back(static_cast<std::int32_t>(r), c, 1.0);
  }
  return from_triplets(n, entries);
}

TEST(CudaEhybFeatures, FivePointGridGrowsLikeItsDiamond) {
  // An interior row: 84 walks of 1-3 steps reach the 24 other points of the radius-3 diamond.
  const double growth = compute_cuda_ehyb_features(grid_5_point(300)).neighbourhood_growth;
  EXPECT_NEAR(growth, 24.0 / 84.0, 0.05);
  EXPECT_LE(growth, kEhybMaxNeighbourhoodGrowth);
}

TEST(CudaEhybFeatures, RenumberingDoesNotHideAMesh) {
  std::mt19937_64 rng(seed_from_env());
  const double growth =
      compute_cuda_ehyb_features(renumbered(grid_5_point(300), rng)).neighbourhood_growth;
  EXPECT_NEAR(growth, 24.0 / 84.0, 0.05);
}

TEST(CudaEhybFeatures, RandomPatternsGrowWithoutOverlap) {
  std::mt19937_64 rng(seed_from_env());
  const double growth =
      compute_cuda_ehyb_features(random_pattern(100'000, 8, rng)).neighbourhood_growth;
  std::cout << "random 100000 x 8 neighbourhood growth " << growth << "\n";
  EXPECT_GT(growth, 0.95);
  EXPECT_GT(growth, kEhybMaxNeighbourhoodGrowth);
}

TEST(CudaEhybFeatures, DiagonalMatrixHasNoGrowth) {
  EXPECT_EQ(compute_cuda_ehyb_features(from_triplets(3, {{0, 0, 1}, {1, 1, 1}, {2, 2, 1}}))
                .neighbourhood_growth,
            0.0);
}

TEST(CudaEhybRules, OffersNothingOnRandomGraphsOrWithoutItsFeatures) {
  const CudaEhybRules rules;
  std::mt19937_64 rng(seed_from_env());
  EXPECT_TRUE(
      rules.candidates(extract_features(random_pattern(20'000, 8, rng)), testing::h100()).empty());
  EXPECT_FALSE(rules.candidates(extract_features(grid_5_point(150)), testing::h100()).empty());
  MatrixFeatures without = extract_features(grid_5_point(150));
  without.format_features.erase("cuda_ehyb");
  EXPECT_TRUE(rules.candidates(without, testing::h100()).empty());
}

// ---------------------------------------------------------------------------------------------
// The rules

// A stored plan of another shape: a set with only the partition count.
struct PartitionsOnly {
  std::uint32_t partitions = 4;
  static constexpr auto kFields =
      std::tuple{declare_field("partitions", &PartitionsOnly::partitions)};
  friend bool operator==(const PartitionsOnly&, const PartitionsOnly&) = default;
};

MatrixFeatures square_features(std::int64_t rows, std::int64_t per_row) {
  MatrixFeatures f = testing::features(rows, rows, rows * per_row);
  f.row_length_min = per_row;
  f.row_length_max = per_row;
  f.distribution = {{per_row, rows}};
  f.format_features.emplace("cuda_ehyb",
                            FieldSet::of(CudaEhybFeatures{.neighbourhood_growth = 0.1}));
  return f;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> parts_and_variants(
    const std::vector<Candidate>& candidates) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (const Candidate& c : candidates) {
    const CudaEhybParams p = CudaEhybRules::params_of(c);
    out.emplace_back(p.partitions, p.variant);
  }
  return out;
}

TEST(CudaEhybRules, Eq1GivesOnePartPerSmUntilTheCacheOverflows) {
  const DeviceInfo h100 = testing::h100();
  // 227 KB less the static 16 bytes: 29054 doubles, 58108 floats.
  EXPECT_EQ(CudaEhybRules::cache_capacity(h100, 8, 1), 29054);
  EXPECT_EQ(CudaEhybRules::cache_capacity(h100, 4, 1), 58108);
  EXPECT_EQ(CudaEhybRules::cache_capacity(h100, 4, 2), 29054);
  EXPECT_EQ(CudaEhybRules::cache_capacity(h100, 2, 1), kEhybMaxCacheEntries);
  EXPECT_EQ(CudaEhybRules::eq1_partitions(1'000'000, h100, 8), 132);  // K = 1: 8334 planned
  EXPECT_EQ(CudaEhybRules::eq1_partitions(5'000'000, h100, 8), 264);  // K = 2: 20834 planned
  EXPECT_EQ(CudaEhybRules::eq1_partitions(5'000'000, h100, 4), 132);  // fp32: 41667 <= 58108
  EXPECT_EQ(CudaEhybRules::eq1_partitions(1000, h100, 8), 15);        // 64 rows a part at least
}

TEST(CudaEhybRules, OffersThePaperVariantAtEq1AndTwiceItAndAsyncAtTwice) {
  const CudaEhybRules rules;
  const DeviceInfo h100 = testing::h100();
  const std::vector<Candidate> c = rules.candidates(square_features(1'000'000, 27), h100);
  EXPECT_THAT(parts_and_variants(c),
              ElementsAre(std::pair{132u, 0u}, std::pair{264u, 0u}, std::pair{264u, 1u}));
  EXPECT_EQ(c[0].launch.block_size, 1024u);  // 7576 rows a part: more slices than warps
  EXPECT_EQ(c[0].launch.grid_size, 132u);    // one block per part
  EXPECT_EQ(c[1].launch.grid_size, 264u);
  EXPECT_EQ(c[2].launch.grid_size, 132u);  // one persistent block per SM, two parts each
  // 5 M rows: Eq. 1's 264 parts leave no room for two buffers; 528 do.
  EXPECT_THAT(parts_and_variants(rules.candidates(square_features(5'000'000, 5), h100)),
              ElementsAre(std::pair{264u, 0u}, std::pair{528u, 0u}, std::pair{528u, 1u}));
  // 1000 rows: 15 parts of 64+ rows; no room for twice that, so async runs at 15 too.
  const std::vector<Candidate> small = rules.candidates(square_features(1000, 5), h100);
  EXPECT_THAT(parts_and_variants(small), ElementsAre(std::pair{15u, 0u}, std::pair{15u, 1u}));
  EXPECT_EQ(small[0].launch.block_size, 128u);  // 67 rows a part: 3 slices
}

TEST(CudaEhybRules, OffersNothingWhereThePartitionMakesNoSense) {
  const CudaEhybRules rules;
  const DeviceInfo h100 = testing::h100();
  EXPECT_TRUE(rules.candidates(square_features(63, 5), h100).empty());  // < 64 rows
  EXPECT_TRUE(rules.candidates(testing::features(10'000, 9'000, 50'000), h100).empty());
  EXPECT_TRUE(rules.candidates(square_features(2'000'000, 17), h100).empty());  // > 2^25 nnz
  EXPECT_TRUE(rules.candidates(square_features(10'000, 5), testing::eight_core_cpu()).empty());
  EXPECT_TRUE(rules.candidates(testing::features(1000, 1000, 0), h100).empty());
  EXPECT_FALSE(rules.admissible(square_features(63, 5), h100, Precision::fp64,
                                std::numeric_limits<std::uint64_t>::max()));
  EXPECT_TRUE(rules.admissible(square_features(1000, 5), h100, Precision::fp64,
                               std::numeric_limits<std::uint64_t>::max()));
  EXPECT_FALSE(rules.admissible(square_features(1000, 5), h100, Precision::fp64, 1000));
}

TEST(CudaEhybRules, DeviceBytesCountShortCachedIndicesAndTheWorstSplit) {
  const CudaEhybRules rules;
  const MatrixFeatures f = square_features(1'000'000, 27);
  const Candidate c{.format = kCudaEhybFormatId,
                    .params = FieldSet::of(CudaEhybParams{.partitions = 132, .variant = 0}),
                    .launch = {}};
  // nnz 27 M; padding 32 x (132 x 27 + 27) slots; values 8 B; indices 4 B a non-zero plus the
  // padding's 2 B (cached) and 4 B (ER); offsets for 31250 slices (+ 132 + 1, + 1); permutation,
  // ER row map, two part tables.
  const std::uint64_t nnz = 27'000'000, leaders = 132 * 27, longest = 27;
  const std::uint64_t slots = nnz + 32 * (leaders + longest);
  const std::uint64_t expected = slots * 8 + 4 * nnz + 64 * leaders + 128 * longest +
                                 8 * ((31250 + 133) + 31251) + 4 * (2'000'000 + 266);
  // y in the new order and the map the gather brings it back through: a value and 4 bytes a row.
  const std::uint64_t gathered_y64 = 1'000'000 * (8 + 4), gathered_y32 = 1'000'000 * (4 + 4);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, c), expected + gathered_y64);
  EXPECT_EQ(rules.device_bytes(f, Precision::fp32, c), expected - 4 * slots + gathered_y32);
  // The hopper variant's arrays are the same.
  Candidate hopper = c;
  hopper.params = FieldSet::of(CudaEhybParams{.partitions = 132, .variant = 1});
  EXPECT_EQ(rules.device_bytes(f, Precision::fp64, hopper), expected + gathered_y64);
}

TEST(CudaEhybRules, StoredPlanIsValidOnlyAsOneOfItsCandidates) {
  const CudaEhybRules rules;
  const DeviceInfo h100 = testing::h100();
  const MatrixFeatures f = square_features(1'000'000, 27);
  const std::vector<Candidate> all = rules.candidates(f, h100);
  for (const Candidate& c : all) EXPECT_TRUE(rules.is_valid(c, f, h100));
  Candidate other_parts = all.front();
  other_parts.params = FieldSet::of(CudaEhybParams{.partitions = 133, .variant = 0});
  EXPECT_FALSE(rules.is_valid(other_parts, f, h100));
  DeviceInfo fewer_sms = h100;
  fewer_sms.sm_count = 114;  // H100 PCIe: Eq. 1 gives 114 parts there
  EXPECT_FALSE(rules.is_valid(all.front(), f, fewer_sms));
}

TEST(CudaEhybRules, RejectsBadParametersWithThePreciseField) {
  try {
    CudaEhybRules::check_params(CudaEhybParams{.partitions = 4, .variant = 7}, 1000);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_THAT(e.what(), HasSubstr("variant 7 is not one of 0 (paper), 1 (async_copy)"));
  }
  try {
    CudaEhybRules::check_params(CudaEhybParams{.partitions = 16, .variant = 0}, 1000);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("partitions 16 for 1000 rows is outside [1, 15]"));
  }
  EXPECT_THROW(CudaEhybRules::check_params(CudaEhybParams{.partitions = 0, .variant = 0}, 1000),
               Error);
  EXPECT_NO_THROW(
      CudaEhybRules::check_params(CudaEhybParams{.partitions = 15, .variant = 1}, 1000));
  // A stored plan without the variant field.
  const Candidate missing{
      .format = kCudaEhybFormatId, .params = FieldSet::of(PartitionsOnly{}), .launch = {}};
  EXPECT_THROW(CudaEhybRules::params_of(missing), Error);
}

}  // namespace
}  // namespace spmvd
