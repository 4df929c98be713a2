#include "client/model_table.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace spmvd {
namespace {

// A hand-written summary in model_set_summary's shape: one fit of each of four families.
nlohmann::json small_summary() {
  return nlohmann::json::parse(R"({
    "model_version": 13,
    "device_signature": "gpu|Test GPU",
    "precision": "fp64",
    "fits": [
      {"family": "csr_vector", "curve": "ms_vs_sample_nnz", "kind": "linear",
       "variant": {"block_size": 128, "threads_per_row": 4, "registers_per_thread": 32},
       "intercept": 0.004, "slope": 2e-6,
       "quality": {"sample_count": 12, "rms_relative_error": 0.031, "max_relative_error": 0.125,
                   "x_min": 1000, "x_max": 1000000}},
      {"family": "bytes", "curve": "ms_vs_bytes", "kind": "linear",
       "intercept": 0.0085, "slope": 3.125e-10, "bandwidth_bytes_per_ms": 3.2e9,
       "l2_share_for_x": 0.5, "banded_ratio": [[1e6, 0.7], [1e8, 0.9]],
       "quality": {"sample_count": 9, "rms_relative_error": 0.02, "max_relative_error": 0.05,
                   "x_min": 1e6, "x_max": 1e9}},
      {"family": "format_bytes", "curve": "ms_vs_bytes", "kind": "linear",
       "format": 3, "params": "library_algorithm=2", "intercept": 0.01,
       "bandwidth_bytes_per_ms": 2.5e9, "floor_ms": 0.008, "long_row_step_ms": 4e-5,
       "banded_ratio": [],
       "quality": {"sample_count": 2, "rms_relative_error": 0.0, "max_relative_error": 0.0}},
      {"family": "cache_resident", "curve": "ratio_vs_length_rows", "kind": "log_grid",
       "format": 99, "params": "-", "block_size": 0, "threads_per_row": 0, "entries_per_thread": 2,
       "widths": [1, 8, 64], "rows": [1000, 100000], "log_ms": [0, 0, 0, 0.6931471805599453, 0, 0],
       "largest_footprint_bytes": 2097152,
       "quality": {"sample_count": 6, "rms_relative_error": 0.1, "max_relative_error": 0.2}}
    ],
    "cpu_gpu": {"cpu_cores": 16, "cpu_operations_per_ms": 458242.7}
  })");
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The index of the first line containing `needle`; lines.size() when none does.
std::size_t index_of(const std::vector<std::string>& lines, const std::string& needle) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return i;
  return lines.size();
}

TEST(ModelTables, HeadsTheOutputWithPrecisionVersionAndDevice) {
  const auto lines = lines_of(model_tables(small_summary()));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "fp64 models (model version 13, gpu|Test GPU)");
}

TEST(ModelTables, PrintsOneHeadedTablePerFamilyPresentInFamilyOrder) {
  const auto lines = lines_of(model_tables(small_summary()));
  const std::size_t csr = index_of(lines, "  csr_vector (1 fit;");
  const std::size_t bytes = index_of(lines, "  bytes (1 fit;");
  const std::size_t own = index_of(lines, "  format_bytes (1 fit;");
  const std::size_t resident = index_of(lines, "  cache_resident (1 fit;");
  ASSERT_LT(resident, lines.size());
  EXPECT_LT(csr, bytes);
  EXPECT_LT(bytes, own);
  EXPECT_LT(own, resident);
  EXPECT_EQ(index_of(lines, "  ell ("), lines.size()) << "no ell fits, no ell table";
  EXPECT_EQ(index_of(lines, "  coo ("), lines.size());
}

TEST(ModelTables, CsrVectorRowShowsVariantMicrosecondsSamplesAndErrorPercent) {
  const auto lines = lines_of(model_tables(small_summary()));
  const std::size_t heading = index_of(lines, "  csr_vector (");
  ASSERT_LT(heading + 2, lines.size());
  const std::string& header = lines[heading + 1];
  const std::string& row = lines[heading + 2];
  EXPECT_NE(header.find("intercept µs"), std::string::npos) << header;
  EXPECT_NE(header.find("samples"), std::string::npos) << header;
  // block 128, 4 lanes, 0.004 ms = 4.00 µs, 2e-6 ms/x = 0.002 µs/x, 12 samples, 3.1 % and 12.5 %
  std::istringstream cells(row);
  std::vector<std::string> words;
  for (std::string word; cells >> word;) words.push_back(word);
  EXPECT_EQ(words, (std::vector<std::string>{"128", "4", "ms_vs_sample_nnz", "4.00", "0.002", "-",
                                             "-", "12", "3.1", "12.5"}))
      << row;
}

TEST(ModelTables, ColumnsAlignUnderTheirHeaders) {
  const auto lines = lines_of(model_tables(small_summary()));
  const std::size_t heading = index_of(lines, "  csr_vector (");
  const std::string& header = lines[heading + 1];
  const std::string& row = lines[heading + 2];
  // µ, µ and ρ before it are two bytes each in UTF-8: the header's byte offset is 3 more.
  EXPECT_EQ(header.find("samples") - 3, row.find(" 12 ") + 1) << header << "\n" << row;
}

TEST(ModelTables, BytesRowShowsBandwidthInGigabytesPerSecondAndBandedRatioRange) {
  const auto lines = lines_of(model_tables(small_summary()));
  const std::size_t heading = index_of(lines, "  bytes (");
  ASSERT_LT(heading + 2, lines.size());
  EXPECT_NE(lines[heading + 1].find("GB/s"), std::string::npos) << lines[heading + 1];
  const std::string& row = lines[heading + 2];
  EXPECT_NE(row.find("8.50"), std::string::npos) << row;       // intercept µs
  EXPECT_NE(row.find("3200"), std::string::npos) << row;       // 3.2e9 B/ms = 3200 GB/s
  EXPECT_NE(row.find("0.70–0.90"), std::string::npos) << row;  // banded ρ
  EXPECT_NE(row.find(" 9 "), std::string::npos) << row;        // samples
  EXPECT_NE(row.find("2.0"), std::string::npos) << row;        // rms %
}

TEST(ModelTables, NamesFormatsFromTheGivenNamesAndFallsBackToTheirId) {
  const auto lines = lines_of(model_tables(small_summary(), {{3, "cusparse_csr"}}));
  const std::size_t own = index_of(lines, "  format_bytes (");
  ASSERT_LT(own + 2, lines.size());
  EXPECT_NE(lines[own + 2].find("cusparse_csr  library_algorithm=2"), std::string::npos)
      << lines[own + 2];
  EXPECT_NE(lines[own + 2].find("40"), std::string::npos) << "long-row step 4e-5 ms = 40 ns";
  const std::size_t resident = index_of(lines, "  cache_resident (");
  EXPECT_NE(lines[resident + 2].find("format 99"), std::string::npos) << lines[resident + 2];
  EXPECT_NE(lines[resident + 2].find("entries_per_thread=2"), std::string::npos)
      << "a COO variant without parameters is told apart by its entries per thread";
}

TEST(ModelTables, SummarisesACacheResidentGridByItsKappaAndAxisRanges) {
  const auto lines = lines_of(model_tables(small_summary()));
  const std::size_t resident = index_of(lines, "  cache_resident (");
  ASSERT_LT(resident + 2, lines.size());
  const std::string& row = lines[resident + 2];
  EXPECT_NE(row.find("1.00–2.00"), std::string::npos) << row;  // exp(0)..exp(ln 2)
  EXPECT_NE(row.find("1–64 (3)"), std::string::npos) << row;
  EXPECT_NE(row.find("1000–100000 (2)"), std::string::npos) << row;
  EXPECT_NE(row.find("2.0"), std::string::npos) << row;  // 2 MiB footprint
  EXPECT_EQ(lines.size(), resident + 3 + 2) << "one row per fit, then a blank and cpu_gpu";
}

TEST(ModelTables, PrintsPaperCoefficientsAfterTheTables) {
  const std::string text = model_tables(small_summary());
  EXPECT_NE(text.find("cpu_gpu: cpu_cores=16 cpu_operations_per_ms=4.582e+05"), std::string::npos)
      << text;
}

TEST(ModelTables, GivesAnUnknownFamilyItsCurveAndQuality) {
  nlohmann::json summary = small_summary();
  summary["fits"] = nlohmann::json::array(
      {{{"family", "future"},
        {"curve", "ms_vs_x"},
        {"kind", "linear"},
        {"quality",
         {{"sample_count", 5}, {"rms_relative_error", 0.5}, {"max_relative_error", 1.0}}}}});
  const auto lines = lines_of(model_tables(summary));
  const std::size_t heading = index_of(lines, "  future (1 fit)");
  ASSERT_LT(heading + 2, lines.size());
  std::istringstream cells(lines[heading + 2]);
  std::vector<std::string> words;
  for (std::string word; cells >> word;) words.push_back(word);
  EXPECT_EQ(words, (std::vector<std::string>{"ms_vs_x", "linear", "5", "50.0", "100.0"}));
}

}  // namespace
}  // namespace spmvd
