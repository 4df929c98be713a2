#include "client/model_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "models/families/bytes/bytes_record.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"
#include "models/model_set.hpp"

namespace spmvd {
namespace {

using Words = std::vector<std::string>;

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

// A line's space-separated words (cells with spaces in them split).
Words words_of(const std::string& line) {
  std::istringstream cells(line);
  Words words;
  for (std::string word; cells >> word;) words.push_back(word);
  return words;
}

// ---- The printer, on hand-written summaries: it knows no family. ----

// A summary in model_set_summary's shape with two tables of an invented family.
nlohmann::json invented_summary() {
  return nlohmann::json::parse(R"({
    "model_version": 13,
    "device_signature": "gpu|Test GPU",
    "precision": "fp64",
    "fits": [],
    "tables": [
      {"family": "warp_magic", "name": "warp_magic", "title": "an invented family",
       "headers": ["lanes", "µs", "spread ρ"],
       "rows": [["32", "4.00", "0.70–0.90"], ["1024", "12.50", "-"]]},
      {"family": "warp_magic", "name": "warp_magic_extra", "title": "",
       "headers": ["what"], "rows": []},
      {"family": "warp_magic", "name": "warp_magic_parts", "title": "",
       "headers": ["part", "share"], "rows": [["head"]]}
    ]
  })");
}

TEST(ModelTables, HeadsTheOutputWithPrecisionVersionAndDevice) {
  const auto lines = lines_of(model_tables(invented_summary()));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "fp64 models (model version 13, gpu|Test GPU)");
}

TEST(ModelTables, PrintsAnInventedFamilysTableAsGiven) {
  const auto lines = lines_of(model_tables(invented_summary()));
  const std::size_t heading = index_of(lines, "  warp_magic (2 fits; an invented family)");
  ASSERT_LT(heading + 3, lines.size()) << model_tables(invented_summary());
  EXPECT_EQ(lines[heading - 1], "") << "a blank line before each table";
  EXPECT_EQ(words_of(lines[heading + 1]), (Words{"lanes", "µs", "spread", "ρ"}));
  EXPECT_EQ(words_of(lines[heading + 2]), (Words{"32", "4.00", "0.70–0.90"}));
  EXPECT_EQ(words_of(lines[heading + 3]), (Words{"1024", "12.50", "-"}));
}

TEST(ModelTables, AlignsColumnsByCharactersNotBytes) {
  const auto lines = lines_of(model_tables(invented_summary()));
  const std::size_t heading = index_of(lines, "  warp_magic (");
  const std::string& header = lines[heading + 1];
  const std::string& row = lines[heading + 2];
  EXPECT_EQ(header, "     lanes  µs     spread ρ");
  EXPECT_EQ(row, "     32     4.00   0.70–0.90");
  // "µs" is 3 bytes for 2 characters: the next column starts one byte later in the header.
  EXPECT_EQ(header.find("spread"), row.find("0.70") + 1) << header << "\n" << row;
}

TEST(ModelTables, LeavesOutATableWithoutRowsAndDashesAMissingCell) {
  const auto lines = lines_of(model_tables(invented_summary()));
  EXPECT_EQ(index_of(lines, "warp_magic_extra"), lines.size());
  const std::size_t parts = index_of(lines, "  warp_magic_parts (1 fit)");
  ASSERT_LT(parts + 2, lines.size());
  EXPECT_EQ(words_of(lines[parts + 2]), (Words{"head", "-"}));
}

TEST(ModelTables, PrintsOnlyTheHeadingForASummaryWithoutTables) {
  nlohmann::json summary = invented_summary();
  summary.erase("tables");
  EXPECT_EQ(model_tables(summary), "fp64 models (model version 13, gpu|Test GPU)\n");
}

// ---- What a user sees for a model set: each family's record makes its table. ----

ModelSet set_of_three_families() {
  ModelSet set;
  set.device_signature = "gpu|Test GPU";
  set.precision = Precision::fp64;
  CsrVectorCalibration csr;
  csr.kernel = {.resources = {.threads_per_block = 128}, .threads_per_row = 4};
  csr.time_vs_row_length = {.threshold_x = 16,
                            .above = {.intercept = 0.004, .slope = 2e-6},
                            .quality = {12, 0.031, 0.125, 1, 64}};
  csr.time_vs_sample_nnz = {.intercept = 0.004, .slope = 2e-9, .quality = {6, 0.02, 0.05, 1, 9}};
  csr.banded_ratio = {{2, 0.7}, {32, 0.9}};
  set.records.put(CsrVectorRecord{.variants = {csr}});
  set.records.put(BytesRecord{
      .shared = BytesCalibration{.time_vs_bytes = {.intercept = 0.0085,
                                                   .slope = 1.0 / 3.2e9,
                                                   .quality = {9, 0.02, 0.05, 1e6, 1e9}},
                                 .l2_share_for_x = 0.5,
                                 .banded_ratio = {{1e6, 0.7}, {1e8, 0.9}}},
      .formats = {{.format = FormatId{3},
                   .params = {},
                   .bytes = {.time_vs_bytes = {.intercept = 0.01, .slope = 1.0 / 2.5e9}},
                   .long_row_step_ms = 4e-5,
                   .floor_ms = 0.008}}});
  set.records.put(CpuGpuTimeCoefficients{.cpu_cores = 16,
                                         .cpu_operations_per_ms = 458242.7,
                                         .gpu_streaming_processors = 132,
                                         .gpu_operations_per_ms_per_sp = 2.3e6,
                                         .host_device_bytes_per_ms = 2.4e7,
                                         .host_device_copy_latency_ms = 0.0085,
                                         .cpu_banded_ratio = 0.31,
                                         .host_round_trip_ms = 0.32,
                                         .host_wake_ms = 0.021,
                                         .cpu_ms_per_row = 2.5e-7,
                                         .x_width_ratio = {{262144, 0.42}, {33554432, 1.0}}});
  CacheResidentCorrection resident{.format = FormatId{999}, .entries_per_thread = 2};
  resident.ratio_vs_length_rows = {.widths = {1, 8, 64},
                                   .rows = {1000, 100000},
                                   .log_ms = {0, 0, 0, std::log(2.0), 0, 0},
                                   .quality = {6, 0.1, 0.2, 1, 64}};
  resident.largest_footprint_bytes = 2 << 20;
  set.cache_resident = {resident};
  set.launch_floor_ms = 0.0042;
  return set;
}

TEST(ModelTables, PrintsEachFamilysTableInRegistryOrderThenTheSetsParts) {
  const auto lines = lines_of(model_tables(model_set_summary(set_of_three_families())));
  std::vector<std::size_t> at;
  for (const char* heading :
       {"  csr_vector (2 fits;", "  bytes (1 fit;", "  format_bytes (1 fit;", "  cpu_gpu (1 fit;",
        "  cache_resident (1 fit;", "  launch_floor (1 fit;"})
    at.push_back(index_of(lines, heading));
  for (std::size_t i = 0; i + 1 < at.size(); ++i) EXPECT_LT(at[i], at[i + 1]) << i;
  EXPECT_LT(at.back(), lines.size());
  EXPECT_EQ(index_of(lines, "  ell ("), lines.size()) << "no ell record, no ell table";
  EXPECT_EQ(index_of(lines, "measured_refit"), lines.size()) << "no refit, no table";
}

TEST(ModelTables, CsrVectorRowsShowVariantMicrosecondsSamplesAndErrorPercent) {
  const auto lines = lines_of(model_tables(model_set_summary(set_of_three_families())));
  const std::size_t heading = index_of(lines, "  csr_vector (");
  ASSERT_LT(heading + 3, lines.size());
  EXPECT_NE(lines[heading + 1].find("intercept µs"), std::string::npos) << lines[heading + 1];
  // block 128, 4 lanes, 0.004 ms = 4.00 µs, 2e-6 ms/x = 0.002 µs/x, threshold 16, banded
  // 0.70-0.90, 12 samples, 3.1 % and 12.5 %
  EXPECT_EQ(words_of(lines[heading + 2]), (Words{"128", "4", "ms_vs_row_length", "4.00", "0.002",
                                                 "16", "0.70–0.90", "12", "3.1", "12.5"}))
      << lines[heading + 2];
  EXPECT_EQ(words_of(lines[heading + 3]),
            (Words{"128", "4", "ms_vs_sample_nnz", "4.00", "2e-06", "-", "-", "6", "2.0", "5.0"}))
      << lines[heading + 3];
}

TEST(ModelTables, BytesRowsShowGigabytesPerSecondAndFormatNames) {
  const auto lines = lines_of(model_tables(model_set_summary(set_of_three_families())));
  const std::size_t bytes = index_of(lines, "  bytes (");
  ASSERT_LT(bytes + 2, lines.size());
  EXPECT_NE(lines[bytes + 1].find("GB/s"), std::string::npos) << lines[bytes + 1];
  // 8.5 µs, 3.2e9 B/ms = 3200 GB/s, L2 share 0.50, banded 0.70-0.90, 9 samples, 2 % and 5 %
  EXPECT_EQ(words_of(lines[bytes + 2]),
            (Words{"8.50", "3200", "0.50", "0.70–0.90", "9", "2.0", "5.0"}));
  const std::size_t own = index_of(lines, "  format_bytes (");
  ASSERT_LT(own + 2, lines.size());
  // format 3 is cusparse_csr; floor 8 µs; long-row step 4e-5 ms = 40 ns
  EXPECT_EQ(words_of(lines[own + 2]),
            (Words{"cusparse_csr", "-", "10.00", "2500", "8.00", "40", "-", "0", "0.0", "0.0"}));
}

TEST(ModelTables, SummarisesACacheResidentGridByItsKappaAndAxisRanges) {
  const auto lines = lines_of(model_tables(model_set_summary(set_of_three_families())));
  const std::size_t resident = index_of(lines, "  cache_resident (");
  ASSERT_LT(resident + 2, lines.size());
  // A format this build does not have prints by id; COO's variant by its entries per thread.
  EXPECT_EQ(words_of(lines[resident + 2]),
            (Words{"format", "999", "entries_per_thread=2", "-", "-", "1.00–2.00", "1–64", "(3)",
                   "1000–100000", "(2)", "-", "2.0", "6", "10.0", "20.0"}));
}

TEST(ModelTables, PrintsPaperCoefficientsAndTheLaunchFloorAsTables) {
  const auto lines = lines_of(model_tables(model_set_summary(set_of_three_families())));
  const std::size_t cpu_gpu = index_of(lines, "  cpu_gpu (");
  ASSERT_LT(cpu_gpu + 2, lines.size());
  EXPECT_NE(lines[cpu_gpu + 1].find("host↔device GB/s"), std::string::npos);
  EXPECT_EQ(words_of(lines[cpu_gpu + 2]),
            (Words{"16", "4.582e+05", "0.31", "132", "2.3e+06", "24.0", "8.50", "320.0", "21.0", "0.25",
                   "0.42–1.00"}));
  const std::size_t floor = index_of(lines, "  launch_floor (");
  ASSERT_LT(floor + 2, lines.size());
  EXPECT_EQ(words_of(lines[floor + 2]), (Words{"4.20"}));
  EXPECT_EQ(lines.size(), floor + 3) << "the launch floor is the last table";
}

}  // namespace
}  // namespace spmvd
