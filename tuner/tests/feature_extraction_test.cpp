#include "tuner/feature_extraction.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/structure_features.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {
namespace {

// Builds a matrix whose row r has lengths[r] entries in columns 0..len-1.
CsrMatrix<double> matrix_with_row_lengths(const std::vector<int>& lengths, std::int64_t cols) {
  CsrMatrix<double> m;
  m.rows = static_cast<std::int64_t>(lengths.size());
  m.cols = cols;
  for (int length : lengths) {
    for (int c = 0; c < length; ++c) {
      m.col_indices.push_back(c);
      m.values.push_back(1.0);
    }
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  return m;
}

TEST(FeatureExtraction, DistributionMatchesPaper000Example) {
  // Paper 000, Sec. 4.1 example: R1={r3,r6}, R2={r1,r4,r10}, R3={r2,r7}, R4={r8}, R6={r9},
  // R7={r5} for rows r1..r10.
  const auto m = matrix_with_row_lengths({2, 3, 1, 2, 7, 1, 3, 4, 6, 2}, 10);
  const MatrixFeatures f = extract_features(m);
  const std::vector<RowLengthCount> expected{{1, 2}, {2, 3}, {3, 2}, {4, 1}, {6, 1}, {7, 1}};
  EXPECT_EQ(f.distribution, expected);
  EXPECT_EQ(f.rows, 10);
  EXPECT_EQ(f.nnz, 31);
  EXPECT_EQ(f.row_length_min, 1);
  EXPECT_EQ(f.row_length_max, 7);
  EXPECT_DOUBLE_EQ(f.row_length_mean, 3.1);
  EXPECT_EQ(f.empty_rows, 0);
}

TEST(FeatureExtraction, EmptyRowsAreCountedOutsideTheDistribution) {
  const auto m = matrix_with_row_lengths({0, 2, 0, 2}, 4);
  const MatrixFeatures f = extract_features(m);
  EXPECT_EQ(f.empty_rows, 2);
  EXPECT_EQ(f.row_length_min, 0);
  const std::vector<RowLengthCount> expected{{2, 2}};
  EXPECT_EQ(f.distribution, expected);
  EXPECT_DOUBLE_EQ(f.row_length_stddev, 1.0);
}

TEST(FeatureExtraction, RowSpanMeasuresXLocality) {
  // Diagonal: every row spans one column of 4.
  CsrMatrix<double> diagonal{4, 4, {0, 1, 2, 3, 4}, {0, 1, 2, 3}, {1, 1, 1, 1}};
  EXPECT_DOUBLE_EQ(extract_features(diagonal).mean_row_span_fraction, 0.25);
  // Every row touches the first and last column.
  CsrMatrix<double> wide{2, 4, {0, 2, 4}, {0, 3, 0, 3}, {1, 1, 1, 1}};
  EXPECT_DOUBLE_EQ(extract_features(wide).mean_row_span_fraction, 1.0);
}

TEST(FeatureExtraction, CountsTheXSectorsEachGroupOfRowsTouches) {
  // A 64 x 64 diagonal: each group of 32 rows touches 32 consecutive columns, 4 sectors of 8.
  CsrMatrix<double> diagonal;
  diagonal.rows = diagonal.cols = 64;
  for (int r = 0; r < 64; ++r) {
    diagonal.col_indices.push_back(r);
    diagonal.values.push_back(1.0);
    diagonal.row_offsets.push_back(r + 1);
  }
  EXPECT_DOUBLE_EQ(extract_features(diagonal).x_sectors_per_nonzero, 8.0 / 64.0);
  // Row r of group g holds column 8 r (a sector of its own) and column 0 (shared by all 32 rows
  // of the group): 33 sectors per group of 64 non-zeros.
  CsrMatrix<double> spread;
  spread.rows = 64;
  spread.cols = 8 * 64;
  for (int r = 0; r < 64; ++r) {
    if (r > 0) spread.col_indices.push_back(0);
    spread.col_indices.push_back(8 * r);
    spread.values.resize(spread.col_indices.size(), 1.0);
    spread.row_offsets.push_back(static_cast<RowOffset>(spread.col_indices.size()));
  }
  // Row 0 holds column 0 once: group 0 touches 32 sectors with 32 non-zeros, group 1 33 with 64.
  EXPECT_DOUBLE_EQ(extract_features(spread).x_sectors_per_nonzero, 65.0 / 127.0);
  CsrMatrix<double> empty{2, 2, {0, 0, 0}, {}, {}};
  EXPECT_DOUBLE_EQ(extract_features(empty).x_sectors_per_nonzero, 0.0);
}

// A matrix of power-law rows (a few of thousands of entries, most of a few) at random columns,
// every row's columns sorted and distinct.
CsrMatrix<double> power_law_rows(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<std::int32_t> column(0, static_cast<std::int32_t>(cols - 1));
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    // Pareto lengths: P(length > l) ~ l^-1.2, at most cols / 2.
    const auto length = std::min<std::int64_t>(
        cols / 2, static_cast<std::int64_t>(std::pow(1.0 - uniform(random), -1.0 / 1.2)));
    std::set<std::int32_t> row;
    while (static_cast<std::int64_t>(row.size()) < length) row.insert(column(random));
    m.col_indices.insert(m.col_indices.end(), row.begin(), row.end());
    m.row_offsets.push_back(static_cast<RowOffset>(m.col_indices.size()));
  }
  m.values.assign(m.col_indices.size(), 1.0);
  return m;
}

// The gathers counted one group after another with a set per group: the definition.
double sectors_per_nonzero_one_group_at_a_time(const CsrMatrix<double>& m,
                                               const std::vector<std::int32_t>& order) {
  std::int64_t sectors = 0;
  for (std::int64_t first = 0; first < m.rows; first += kXGatherGroupRows) {
    std::set<std::int64_t> touched;
    for (std::int64_t i = first; i < std::min(first + kXGatherGroupRows, m.rows); ++i) {
      const std::int32_t row = order[static_cast<std::size_t>(i)];
      for (RowOffset k = m.row_offsets[row]; k < m.row_offsets[row + 1]; ++k)
        touched.insert(m.col_indices[static_cast<std::size_t>(k)] / kXSectorColumns);
    }
    sectors += static_cast<std::int64_t>(touched.size());
  }
  return static_cast<double>(sectors) / static_cast<double>(m.nnz());
}

TEST(FeatureExtraction, GatherCountsDoNotDependOnHowTheGroupsAreSplitAmongTasks) {
  // Enough non-zeros for many tasks, the longest rows first once sorted: the split that
  // balances non-zeros puts them in tasks of their own.
  const std::uint64_t seed = 20261124;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const CsrMatrix<double> m = power_law_rows(20'011, 30'000, seed);
  ASSERT_GT(m.nnz(), 4096 * 8);
  std::vector<std::int32_t> identity(static_cast<std::size_t>(m.rows));
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_DOUBLE_EQ(x_sectors_per_nonzero(m), sectors_per_nonzero_one_group_at_a_time(m, identity));
  for (const std::int64_t window : {std::int64_t{256}, std::int64_t{4096}, m.rows}) {
    SCOPED_TRACE("sort window " + std::to_string(window));
    const std::vector<std::int32_t> order = length_sorted_row_order(m, window);
    EXPECT_DOUBLE_EQ(x_sectors_per_nonzero(m, order),
                     sectors_per_nonzero_one_group_at_a_time(m, order));
  }
}

TEST(FeatureExtraction, LengthSortedRowOrderIsStableWithinWindowsAndWhole) {
  const auto m = matrix_with_row_lengths({2, 3, 1, 3, 2, 1, 4}, 10);
  // Windows of 3: {0,1,2} -> 1 0 2, {3,4,5} -> 3 4 5, {6} -> 6.
  EXPECT_EQ(length_sorted_row_order(m, 3), (std::vector<std::int32_t>{1, 0, 2, 3, 4, 5, 6}));
  // Whole (the counting sort): longest first, equal lengths in row order.
  const std::vector<std::int32_t> whole{6, 1, 3, 0, 4, 2, 5};
  EXPECT_EQ(length_sorted_row_order(m, 7), whole);
  EXPECT_EQ(length_sorted_row_order(m, 1000), whole);
  EXPECT_EQ(length_sorted_row_order(m, 6), (std::vector<std::int32_t>{1, 3, 0, 4, 2, 5, 6}));
  EXPECT_EQ(length_sorted_row_order(m, 1), (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6}));
}

// Rules whose own_features hook records what it was given (the common features), or computes
// nothing, to test how extraction runs the hooks without any real format.
class HookRules final : public FormatRules {
 public:
  HookRules(std::uint16_t id, std::string name, bool computes)
      : id_{id}, name_(std::move(name)), computes_(computes) {}
  FormatId id() const noexcept override { return id_; }
  std::string_view name() const noexcept override { return name_; }
  bool needs_gpu() const noexcept override { return false; }
  std::string_view model_family() const noexcept override { return "bytes"; }
  bool admissible(const MatrixFeatures&, const DeviceInfo&, Precision,
                  std::uint64_t) const override {
    return true;
  }
  std::vector<Candidate> candidates(const MatrixFeatures&, const DeviceInfo&) const override {
    return {};
  }
  std::uint64_t device_bytes(const MatrixFeatures&, Precision, const Candidate&) const override {
    return 0;
  }
  std::optional<FieldSet> own_features(const CsrMatrix<double>& m,
                                       const MatrixFeatures& common) const override {
    if (!computes_) return std::nullopt;
    return FieldSet({{"rows_seen", m.rows},
                     {"nnz_seen", common.nnz},
                     {"sectors_seen", common.x_sectors_per_nonzero}});
  }

 private:
  FormatId id_;
  std::string name_;
  bool computes_;
};

std::unique_ptr<SpmvOperator> never_built(const BuildSource&, Precision, const Candidate&) {
  throw Error(ErrorCode::internal, "feature extraction must not build formats");
}

TEST(FeatureExtraction, RunsEveryRegisteredHookOnTheCommonFeaturesAndFilesItByName) {
  FormatRegistry registry;
  registry.add(std::make_unique<HookRules>(7, "with_own", true), &never_built);
  registry.add(std::make_unique<HookRules>(8, "without_own", false), &never_built);
  const auto m = matrix_with_row_lengths({2, 3, 1}, 4);
  const MatrixFeatures f = extract_features(m, registry);
  ASSERT_EQ(f.format_features.size(), 1U);  // a hook that computes nothing files nothing
  ASSERT_TRUE(f.format_features.contains("with_own"));
  // The hook saw the common features already computed.
  EXPECT_EQ(f.format_features.at("with_own"),
            FieldSet({{"rows_seen", std::int64_t{3}},
                      {"nnz_seen", std::int64_t{6}},
                      {"sectors_seen", f.x_sectors_per_nonzero}}));
  EXPECT_GT(f.x_sectors_per_nonzero, 0.0);
}

TEST(FeatureExtraction, FilesOwnFeaturesOnlyUnderRegisteredFormats) {
  const MatrixFeatures f = extract_features(matrix_with_row_lengths({2, 3, 1, 3, 2, 1, 4}, 10));
  for (const auto& [format, own] : f.format_features)
    EXPECT_NE(format_registry().find(format), nullptr) << format;
  // Every format's hook runs, whichever kernels this build compiled (every format's rules are
  // registered): cuda_bce's (its row runs), the BRO formats' (their stream sizes), cuda_dia's,
  // cuda_ehyb's, cuda_sell's and cusparse_bsr's.
  std::vector<std::string> formats;
  for (const auto& [format, own] : f.format_features) formats.push_back(format);
  EXPECT_EQ(formats,
            (std::vector<std::string>{"cuda_bce", "cuda_bro_coo", "cuda_bro_ell", "cuda_bro_hyb",
                                      "cuda_dia", "cuda_ehyb", "cuda_sell", "cusparse_bsr"}));
}

TEST(FeatureExtraction, LeavesOutTheFormatsTheFilterRefusesAndAddsThemLater) {
  FormatRegistry registry;
  registry.add(std::make_unique<HookRules>(7, "kept", true), &never_built);
  registry.add(std::make_unique<HookRules>(8, "refused_with_hook", true), &never_built);
  registry.add(std::make_unique<HookRules>(9, "refused_without", false), &never_built);
  const auto m = matrix_with_row_lengths({2, 3, 1, 4}, 6);
  const MatrixFeatures full = extract_features(m, registry);
  EXPECT_TRUE(full.formats_left_out.empty());

  // The filter is made from the common features, which the pass has computed by then.
  double sectors_given = -1.0;
  MatrixFeatures f = extract_features(
      m, registry, FeatureEffort::standard, nullptr, [&](const MatrixFeatures& common) {
        sectors_given = common.x_sectors_per_nonzero;
        return FormatFilter(
            [](const FormatEntry& entry) { return entry.rules->name() == "kept"; });
      });
  EXPECT_EQ(sectors_given, full.x_sectors_per_nonzero);
  // Refused formats are listed (ascending) whether or not they have a hook, and nothing of
  // theirs is filed.
  EXPECT_EQ(f.formats_left_out,
            (std::vector<std::string>{"refused_with_hook", "refused_without"}));
  EXPECT_TRUE(f.left_out("refused_without"));
  EXPECT_FALSE(f.left_out("kept"));
  EXPECT_EQ(f.format_features.size(), 1U);
  EXPECT_TRUE(f.format_features.contains("kept"));

  // Extending with a filter that still refuses one adds only the other.
  EXPECT_EQ(extend_features(m, registry, FeatureEffort::standard, f,
                            [](const FormatEntry& entry) {
                              return entry.rules->name() == "refused_with_hook";
                            }),
            1U);
  EXPECT_EQ(f.formats_left_out, (std::vector<std::string>{"refused_without"}));
  // Then with no filter: every format; the features are those of a pass that left none out.
  EXPECT_EQ(extend_features(m, registry, FeatureEffort::standard, f, {}), 1U);
  EXPECT_EQ(f, full);
  EXPECT_EQ(extend_features(m, registry, FeatureEffort::standard, f, {}), 0U);
}

TEST(FeatureExtraction, EmptyMatrixHasZeroFeatures) {
  CsrMatrix<double> m;
  m.cols = 3;
  const MatrixFeatures f = extract_features(m);
  EXPECT_EQ(f.rows, 0);
  EXPECT_TRUE(f.distribution.empty());
  EXPECT_EQ(f.x_sectors_per_nonzero, 0.0);  // measured: no non-zeros, no sectors
}

}  // namespace
}  // namespace spmvd
