#include "partition/opa.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "models/blocked_ell_time_model.hpp"
#include "partition/row_length_distribution.hpp"
#include "partition/row_reordering.hpp"
#include "partition/tests/paper_000_example.hpp"

namespace spmvd {
namespace {

// T_c with f_p = 1 ms^-1 and the given L: costs are whole numbers, so sums compare exactly.
BlockedEllBlockCost paper_cost(std::int64_t lower_limit_rows, double sm_elements_per_ms = 1.0) {
  return BlockedEllBlockCost(BlockedEllTimeCoefficients{.transfer_elements_per_ms = 1.0,
                                                        .sm_elements_per_ms = sm_elements_per_ms,
                                                        .lower_limit_rows = lower_limit_rows,
                                                        .sm_count = 1});
}

RowVectorSets paper_example_sets() {
  static const RowLengthDistribution df = row_length_distribution(testing::paper_000_row_offsets());
  return RowVectorSets(df.sets);
}

struct BruteForce {
  double cost_ms = INFINITY;
  std::vector<std::int64_t> set_ends;
};

// Every partition of n sets into consecutive blocks (2^(n-1) of them), at most max_blocks.
BruteForce brute_force(const RowVectorSets& sets, const BlockCost& cost, std::int64_t max_blocks) {
  const std::int64_t n = sets.size();
  BruteForce best;
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << (n - 1)); ++mask) {
    std::vector<std::int64_t> ends;
    for (std::int64_t i = 0; i + 1 < n; ++i)
      if ((mask >> i) & 1) ends.push_back(i + 1);
    ends.push_back(n);
    if (static_cast<std::int64_t>(ends.size()) > max_blocks) continue;
    const double c = partition_cost_ms(sets, cost, ends);
    if (c < best.cost_ms) best = {c, ends};
  }
  return best;
}

std::vector<RowLengthCount> random_sets(std::mt19937_64& rng, std::int64_t count) {
  std::vector<RowLengthCount> sets;
  std::int64_t length = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    length += static_cast<std::int64_t>(rng() % 6) + 1;
    // Row counts spanning few (below L) to many, as a power law's head and tail do.
    const std::int64_t rows = rng() % 3 == 0 ? static_cast<std::int64_t>(rng() % 400) + 1
                                             : static_cast<std::int64_t>(rng() % 8) + 1;
    sets.push_back({length, rows});
  }
  return sets;
}

// Relative tolerance for costs summed in different orders.
void expect_same_cost(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::abs(expected)));
}

TEST(Opa, PaperExampleWithLowerLimitFourKeepsTwoBlocks) {
  // L = 4, f_p = 1: C1 = R_{1,2} (5 rows > L: E = 5 x 2 = 10), C2 = R_{3,7} (5 rows: 5 x 7 =
  // 35); 45 is the unique minimum of the 32 partitions.
  const OptimalPartition p = optimal_partition(paper_example_sets(), paper_cost(4));
  EXPECT_EQ(p.upper_lengths, (std::vector<std::int64_t>{2, 7}));
  EXPECT_EQ(p.set_ends, (std::vector<std::int64_t>{2, 6}));
  EXPECT_DOUBLE_EQ(p.cost_ms, 45.0);
}

TEST(Opa, PaperExampleWithLowerLimitTwoSplitsIntoFour) {
  // L = 2: R_1 (2 rows: 1 x 2), R_2 (3 x 2), R_{3,4} (3 x 4), R_{6,7} (2 rows <= L: 7 x 2);
  // 2 + 6 + 12 + 14 = 34, the unique minimum.
  for (const OpaMethod method :
       {OpaMethod::automatic, OpaMethod::quadratic, OpaMethod::paper_cubic}) {
    const OptimalPartition p =
        optimal_partition(paper_example_sets(), paper_cost(2), {.method = method});
    EXPECT_EQ(p.upper_lengths, (std::vector<std::int64_t>{1, 2, 4, 7}));
    EXPECT_DOUBLE_EQ(p.cost_ms, 34.0);
  }
}

TEST(Opa, WithoutALowerLimitEverySetIsItsOwnBlock) {
  // L = 0: T_c = E(C) >= NNZ(C), equal only for a single set, so all-separate costs NNZ = 31.
  const OptimalPartition p = optimal_partition(paper_example_sets(), paper_cost(0));
  EXPECT_EQ(p.upper_lengths, (std::vector<std::int64_t>{1, 2, 3, 4, 6, 7}));
  EXPECT_DOUBLE_EQ(p.cost_ms, 31.0);
}

TEST(Opa, CapOnBlocksKeepsTheBestPartitionWithinIt) {
  // L = 2 capped at 2 blocks: brute force over the 6 two-block partitions and the one block.
  const RowVectorSets sets = paper_example_sets();
  const BlockedEllBlockCost cost = paper_cost(2);
  const BruteForce expected = brute_force(sets, cost, 2);
  const OptimalPartition p = optimal_partition(sets, cost, {.max_blocks = 2});
  EXPECT_EQ(p.set_ends, expected.set_ends);
  EXPECT_DOUBLE_EQ(p.cost_ms, expected.cost_ms);
}

TEST(Opa, EmptyDistributionHasNoBlocks) {
  const RowVectorSets sets(std::vector<RowLengthCount>{});
  const OptimalPartition p = optimal_partition(sets, paper_cost(4));
  EXPECT_TRUE(p.upper_lengths.empty());
  EXPECT_EQ(p.cost_ms, 0.0);
}

TEST(Opa, PaperCostSatisfiesTheQuadrangleInequality) {
  for (const unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const RowVectorSets sets(random_sets(rng, 14));
    const BlockedEllBlockCost cost = paper_cost(static_cast<std::int64_t>(rng() % 300));
    const auto t = [&](std::int64_t i, std::int64_t j) { return cost.time_ms(sets.range(i, j)); };
    const std::int64_t n = sets.size();
    for (std::int64_t a = 0; a <= n; ++a)
      for (std::int64_t b = a; b <= n; ++b)
        for (std::int64_t c = b + 1; c <= n; ++c)
          for (std::int64_t d = c; d <= n; ++d) {
            if (a == c || b == d) continue;  // empty blocks are not blocks
            EXPECT_LE(t(a, c) + t(b, d), t(a, d) + t(b, c))
                << "a " << a << " b " << b << " c " << c << " d " << d;
          }
  }
}

TEST(Opa, MatchesBruteForceOnRandomDfsByEveryMethod) {
  for (unsigned seed = 100; seed < 140; ++seed) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const RowVectorSets sets(random_sets(rng, static_cast<std::int64_t>(rng() % 11) + 1));
    const BlockedEllBlockCost cost =
        paper_cost(static_cast<std::int64_t>(rng() % 300), 0.5 + static_cast<double>(rng() % 8));
    const std::int64_t cap = static_cast<std::int64_t>(rng() % sets.size()) + 1;
    const BruteForce best = brute_force(sets, cost, sets.size());
    const BruteForce best_capped = brute_force(sets, cost, cap);
    for (const OpaMethod method :
         {OpaMethod::automatic, OpaMethod::quadratic, OpaMethod::paper_cubic}) {
      SCOPED_TRACE("method " + std::to_string(static_cast<int>(method)) + " cap " +
                   std::to_string(cap));
      const OptimalPartition p = optimal_partition(sets, cost, {.method = method});
      expect_same_cost(p.cost_ms, best.cost_ms);
      expect_same_cost(partition_cost_ms(sets, cost, p.set_ends), p.cost_ms);
      const OptimalPartition capped =
          optimal_partition(sets, cost, {.max_blocks = cap, .method = method});
      expect_same_cost(capped.cost_ms, best_capped.cost_ms);
      EXPECT_LE(static_cast<std::int64_t>(capped.set_ends.size()), cap);
    }
  }
}

TEST(Opa, MatchesBruteForceForACostWithoutTheQuadrangleInequality) {
  // A per-block launch cost that rewards widths divisible by 4 (as vector loads might): no
  // structure OPA could lean on, so only the quadratic and cubic paths apply.
  const FunctionBlockCost cost(
      [](const RowVectorSetRange& c) {
        return static_cast<double>(c.entries()) * (c.width % 4 == 0 ? 0.5 : 1.0) + 40.0;
      },
      /*satisfies_quadrangle_inequality=*/false);
  for (unsigned seed = 200; seed < 230; ++seed) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const RowVectorSets sets(random_sets(rng, static_cast<std::int64_t>(rng() % 11) + 1));
    const std::int64_t cap = static_cast<std::int64_t>(rng() % sets.size()) + 1;
    for (const OpaMethod method : {OpaMethod::automatic, OpaMethod::paper_cubic}) {
      expect_same_cost(optimal_partition(sets, cost, {.method = method}).cost_ms,
                       brute_force(sets, cost, sets.size()).cost_ms);
      expect_same_cost(optimal_partition(sets, cost, {.max_blocks = cap, .method = method}).cost_ms,
                       brute_force(sets, cost, cap).cost_ms);
    }
  }
}

TEST(Opa, NeverCostsMoreThanOneBlockOrAllSeparateOnLargeDfs) {
  for (unsigned seed = 300; seed < 310; ++seed) {
    std::cout << "seed " << seed << "\n";
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const RowVectorSets sets(random_sets(rng, 400));
    const BlockedEllBlockCost cost = paper_cost(static_cast<std::int64_t>(rng() % 300));
    std::vector<std::int64_t> every_set(sets.size());
    for (std::int64_t i = 0; i < sets.size(); ++i) every_set[i] = i + 1;
    const double one_block = partition_cost_ms(sets, cost, {sets.size()});
    const double all_separate = partition_cost_ms(sets, cost, every_set);

    const OptimalPartition fast = optimal_partition(sets, cost);
    const OptimalPartition quadratic =
        optimal_partition(sets, cost, {.method = OpaMethod::quadratic});
    EXPECT_LE(fast.cost_ms, one_block);
    EXPECT_LE(fast.cost_ms, all_separate);
    expect_same_cost(fast.cost_ms, quadratic.cost_ms);
    const OptimalPartition capped = optimal_partition(sets, cost, {.max_blocks = 8});
    const OptimalPartition capped_cubic =
        optimal_partition(sets, cost, {.max_blocks = 8, .method = OpaMethod::paper_cubic});
    expect_same_cost(capped.cost_ms, capped_cubic.cost_ms);
    EXPECT_LE(capped.cost_ms, one_block);
    EXPECT_GE(capped.cost_ms, fast.cost_ms);
  }
}

TEST(Opa, CostAgreesWithTheBlockedEllTimeModel) {
  // With s = 1, models/blocked_ell_time_model gives T = T_t + Cost(P) for the same boundaries.
  const BlockedEllTimeCoefficients c{.transfer_elements_per_ms = 10,
                                     .sm_elements_per_ms = 2,
                                     .lower_limit_rows = 3,
                                     .sm_count = 1};
  const RowLengthDistribution df = row_length_distribution(testing::paper_000_row_offsets());
  const MatrixFeatures f = distribution_features(df, 10);
  const OptimalPartition p = optimal_partition(RowVectorSets(df.sets), BlockedEllBlockCost(c));
  EXPECT_DOUBLE_EQ(blocked_ell_time_ms(f, p.upper_lengths, c),
                   transmission_time_ms(10, 10, 31, c) + p.cost_ms);
}

TEST(Opa, BoundariesReorderIntoBlocksOfTheSizesItCosted) {
  // DF -> OPA -> Algorithm 3 on seeded random rows: Ap and Aw are N(C_i) and W(C_i).
  const unsigned seed = 400;
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> offsets{0};
  for (int r = 0; r < 20000; ++r) {
    const auto u = rng() % 1000;
    offsets.push_back(offsets.back() + (u < 900 ? static_cast<std::int64_t>(rng() % 20)
                                                : static_cast<std::int64_t>(rng() % 2000)));
  }
  const RowLengthDistribution df = row_length_distribution(offsets);
  const RowVectorSets sets(df.sets);
  const OptimalPartition p = optimal_partition(sets, paper_cost(64));
  const BlockedRowOrder order = reorder_rows(offsets, p.upper_lengths);

  ASSERT_EQ(order.block_widths, p.upper_lengths);
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < p.set_ends.size(); ++i) {
    const RowVectorSetRange block = sets.range(begin, p.set_ends[i]);
    EXPECT_EQ(order.block_row_offsets[i + 1] - order.block_row_offsets[i], block.rows);
    begin = p.set_ends[i];
  }
  EXPECT_EQ(order.block_row_offsets.back(), df.rows - df.empty_rows);
}

TEST(Opa, RefusesANegativeCap) {
  try {
    optimal_partition(paper_example_sets(), paper_cost(4), {.max_blocks = -1});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "optimal_partition: max_blocks -1 is negative");
  }
}

}  // namespace
}  // namespace spmvd
