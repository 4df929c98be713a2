#include "models/model_set.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"
#include "models/families/bytes/bytes_family.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_record.hpp"
#include "models/families/cpu_gpu/cpu_gpu_record.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"
#include "models/families/ell/ell_record.hpp"
#include "models/family_model.hpp"
#include "models/tests/test_device.hpp"

namespace spmvd {
namespace {

using testing_support::h100_like;

ModelSet full_set() {
  ModelSet set;
  set.device_signature = h100_like().signature();
  set.precision = Precision::fp32;
  CsrVectorCalibration csr;
  csr.kernel = {.resources = {.threads_per_block = 256, .registers_per_thread = 40,
                              .static_shared_bytes = 0, .dynamic_shared_bytes = 1024},
                .threads_per_row = 8};
  csr.sample_strips = 4;
  csr.time_vs_row_length = {.threshold_x = 24,
                            .below = {.c0 = 0.01, .c1 = 1e-4, .c2 = 3.3e-7,
                                      .quality = {3, 0.01, 0.02, 1, 23}},
                            .above = {.intercept = 0.004, .slope = 8e-4,
                                      .quality = {70, 0.003, 0.011, 24, 96}},
                            .quality = {73, 0.005, 0.02, 1, 96}};
  csr.time_vs_sample_nnz = {.intercept = 0.004, .slope = 1.0 / 3.0 * 1e-7,
                            .quality = {70, 0.004, 0.012, 24 * 8448.0, 96 * 8448.0}};
  csr.samples = {{1, 0.0101}, {24, 0.0233}, {96, 0.08}};
  set.records.put(CsrVectorRecord{.variants = {csr}});
  LogGridFit grid;
  grid.widths = {1, 8};
  grid.rows = {1e3, 1e6};
  grid.log_ms = {std::log(0.01), std::log(0.03), std::log(0.2), std::log(1.7)};
  grid.quality = {4, 0, 0, 1, 8};
  set.records.put(EllRecord{
      .variants = {{.kernel = {.resources = {.threads_per_block = 128}, .threads_per_row = 1},
                    .time_vs_width_rows = grid}}});
  set.records.put(CooRecord{
      .variants = {{.kernel = {.resources = {.threads_per_block = 256}, .threads_per_row = 1},
                    .time_vs_nnz = {.intercept = 0.02,
                                    .slope = 1.1e-6,
                                    .quality = {12, 0.02, 0.04, 1e4, 1e8}},
                    .samples = {{1e4, 0.031}, {1e8, 110.0}}}}});
  set.records.put(BytesRecord{
      .shared = BytesCalibration{.time_vs_bytes = {.intercept = 0.005,
                                                   .slope = 3.1e-10,
                                                   .quality = {20, 0.05, 0.1, 1e5, 1e10}},
                                 .l2_share_for_x = 0.4,
                                 .samples = {{1e5, 0.005}, {1e10, 3.2}}},
      .formats = {{.format = FormatId{10},
                   .params = {},
                   .bytes = {.time_vs_bytes = {.intercept = 0.006, .slope = 4e-10, .quality = {}}},
                   .long_row_step_ms = 4e-5,
                   .floor_ms = 0.007}}});
  set.measured_refit = {{.format = FormatId{3}, .factor = 1.0 / 3.0, .sample_count = 40},
                        {.format = FormatId{11}, .factor = 1.25, .sample_count = 7}};
  set.host_build_rates = {{.format = FormatId{20}, .ns_per_nonzero = 351.25, .ns_per_device_byte = 35.5, .sample_nonzeros = 1 << 24},
                          {.format = FormatId{17}, .ns_per_nonzero = 47.5, .ns_per_device_byte = 4.75, .sample_nonzeros = 1 << 22}};
  set.composed_launch_floors = {
      {.format = FormatId{14},
       .params = FieldSet::of(CudaBceParams{.boundaries = {4, 9}, .variant = 1, .resident_threads = 270336}),
       .floor_ms = 0.0061}};
  set.row_block_waves = {{.block_size = 128, .wave_ms = 0.0014}, {.block_size = 512, .wave_ms = 0.0019}};
  return set;
}

CpuGpuTimeCoefficients paper_003_coefficients() {
  return {.cpu_cores = 16,
          .cpu_operations_per_ms = 4.1e5,
          .gpu_streaming_processors = 132,
          .gpu_operations_per_ms_per_sp = 2.3e6,
          .host_device_bytes_per_ms = 2.4e7,
          .host_device_copy_latency_ms = 0.0085,
          .cpu_banded_ratio = 0.31,
          .host_round_trip_ms = 0.32,
          .host_wake_ms = 0.021,
          .cpu_ms_per_row = 2.5e-7,
          .x_width_ratio = {{262144, 0.42}, {2097152, 0.71}, {33554432, 1.0}}};
}

// full_set with every registered family that keeps a record.
ModelSet set_with_every_family() {
  ModelSet set = full_set();
  set.records.put(paper_003_coefficients());
  return set;
}

TEST(ModelSet, JsonRoundTripKeepsEveryValue) {
  const ModelSet set = full_set();
  const std::string text = model_set_to_json(set);
  const ModelSet back = model_set_from_json(text, h100_like().signature(), Precision::fp32);
  EXPECT_EQ(back, set);
  EXPECT_EQ(back.records.find<CpuGpuTimeCoefficients>(), nullptr);
}

TEST(ModelSet, JsonRoundTripKeepsTheRecordOfEveryRegisteredFamily) {
  const ModelSet set = set_with_every_family();
  for (const FamilyEntry& entry : model_families()) {
    if (entry.read_record == nullptr) continue;
    EXPECT_NE(set.records.find(entry.name), nullptr)
        << "the test set lacks family " << entry.name
        << "'s record: add it to set_with_every_family";
  }
  const std::string text = model_set_to_json(set);
  const nlohmann::json j = nlohmann::json::parse(text);
  std::printf("families in the JSON:");
  for (const auto& [name, record] : j.at("families").items()) std::printf(" %s", name.c_str());
  std::printf("\n");
  EXPECT_EQ(j.at("families").size(), set.records.size());
  const ModelSet back = model_set_from_json(text, h100_like().signature(), Precision::fp32);
  EXPECT_EQ(back, set);
  for (const auto& [name, record] : set.records.all()) {
    const FamilyRecord* read = back.records.find(name);
    ASSERT_NE(read, nullptr) << name;
    EXPECT_EQ(read->family(), name);
    EXPECT_TRUE(read->equals(*record)) << name;
  }
  EXPECT_EQ(*back.records.find<CpuGpuTimeCoefficients>(), paper_003_coefficients());
  EXPECT_EQ(j.at("families").at("cpu_gpu").at("cpu_banded_ratio"), 0.31);
  EXPECT_EQ(j.at("families").at("cpu_gpu").at("host_round_trip_ms"), 0.32);
  EXPECT_EQ(back.records.find<BytesRecord>()->formats.at(0).floor_ms, 0.007);
}

TEST(ModelSet, RefusesAnUnknownFamilyNamingIt) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["families"]["warp_magic"] = {{"variants", nlohmann::json::array()}};
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "read a family this build does not register";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    std::printf("unknown family: %s\n", e.what());
    EXPECT_NE(std::string(e.what()).find("unknown model family \"warp_magic\""), std::string::npos)
        << e.what();
  }
}

TEST(ModelSet, RefusesARecordForAFamilyThatKeepsNone) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["families"]["hyb"] = nlohmann::json::object();  // hyb reads ell's and coo's records
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "read a record for hyb";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("\"hyb\" keeps no record"), std::string::npos) << e.what();
  }
}

TEST(ModelSet, EqualityTellsSetsDifferingInOneFamilysRecordApart) {
  const ModelSet set = set_with_every_family();
  EXPECT_EQ(set, set_with_every_family());
  ModelSet other = set;
  other.records.update<CooRecord>(
      [](CooRecord& r) { r.variants.at(0).time_vs_nnz.slope *= 1.0 + 1e-12; });
  EXPECT_NE(other, set) << "a COO slope differs";
  other = set;
  other.records.update<CpuGpuTimeCoefficients>(
      [](CpuGpuTimeCoefficients& c) { c.host_device_copy_latency_ms = 0.009; });
  EXPECT_NE(other, set) << "a paper 003 coefficient differs";
  other = set;
  other.records.erase(CsrVectorRecord::kFamily);
  EXPECT_NE(other, set) << "one set lacks the csr_vector record";
  other.records.put(CsrVectorRecord{});
  EXPECT_NE(other, set) << "an empty csr_vector record is not the fitted one";
}

TEST(ModelSet, SummaryListsEveryFamilysRecord) {
  const nlohmann::json s = model_set_summary(set_with_every_family());
  std::set<std::string> families;
  for (const nlohmann::json& fit : s.at("fits")) families.insert(fit.at("family"));
  std::printf("summary families:");
  for (const std::string& family : families) std::printf(" %s", family.c_str());
  std::printf(" + cpu_gpu coefficients\n");
  EXPECT_EQ(families, (std::set<std::string>{"csr_vector", "ell", "coo", "bytes", "format_bytes"}));
  EXPECT_EQ(s.at("cpu_gpu").at("cpu_cores"), 16);
  EXPECT_EQ(s.at("cpu_gpu").at("host_device_copy_latency_ms"), 0.0085);
  const nlohmann::json& own = s.at("fits").back();
  EXPECT_EQ(own.at("family"), "format_bytes");
  EXPECT_EQ(own.at("format"), 10);
  EXPECT_EQ(own.at("floor_ms"), 0.007);
}

using Cells = std::vector<std::string>;

// The summary's table `name`; null where it has none.
nlohmann::json summary_table(const nlohmann::json& summary, const std::string& name) {
  for (const nlohmann::json& table : summary.at("tables"))
    if (table.at("name") == name) return table;
  return nullptr;
}

// What each registered family's record shows in `spmvctl model show`: its headers and, for its
// first row, the cells a user reads (units converted: ms -> µs, ms/byte -> GB/s, errors in %).
TEST(ModelSet, EachRegisteredFamilysTableComesFromItsRecord) {
  const ModelSet set = set_with_every_family();
  const nlohmann::json s = model_set_summary(set);
  const std::map<std::string, std::pair<Cells, Cells>> expected = {
      {"csr_vector",
       {{"block", "lanes", "curve", "intercept µs", "slope µs/x", "threshold x", "banded ρ",
         "samples", "rms %", "max %"},
        // Fig. 3's linear part: 0.004 ms, 8e-4 ms/x; the whole fit's 73 samples, 0.5 % and 2 %
        {"256", "8", "ms_vs_row_length", "4.00", "0.8", "24", "-", "73", "0.5", "2.0"}}},
      {"ell",
       {{"block", "lanes", "widths", "rows", "banded ρ", "samples", "rms %", "max %"},
        {"128", "1", "1–8 (2)", "1000–1000000 (2)", "-", "4", "0.0", "0.0"}}},
      {"coo",
       {{"block", "lanes", "entries/thread", "intercept µs", "ns/nnz", "banded ρ", "samples",
         "rms %", "max %"},
        {"256", "1", "0", "20.00", "1.1", "-", "12", "2.0", "4.0"}}},
      {"bytes",  // 1 / 3.1e-10 bytes per ms = 3226 GB/s
       {{"intercept µs", "GB/s", "L2 share for x", "banded ρ", "samples", "rms %", "max %"},
        {"5.00", "3226", "0.40", "-", "20", "5.0", "10.0"}}},
      {"format_bytes",  // format 10 is cusparse_sell; its step 4e-5 ms = 40 ns
       {{"format", "params", "intercept µs", "GB/s", "floor µs", "long-row step ns", "banded ρ",
         "samples", "rms %", "max %"},
        {"cusparse_sell", "-", "6.00", "2500", "7.00", "40", "-", "0", "0.0", "0.0"}}},
      {"cpu_gpu",  // 2.4e7 bytes per ms = 24 GB/s, 0.0085 ms = 8.5 µs
       {{"cores nc", "ops/ms/core fc", "host banded ρ", "SMs C", "ops/ms/SM F",
         "host↔device GB/s", "copy latency µs", "host round trip µs", "host wake µs",
         "host row ns",
         "host x-width ratio"},
        {"16", "4.1e+05", "0.31", "132", "2.3e+06", "24.0", "8.50", "320.0", "21.0", "0.25",
         "0.42–1.00"}}}};
  std::set<std::string> families_with_tables;
  for (const FamilyEntry& entry : model_families()) {
    if (entry.read_record == nullptr) continue;
    const FamilyRecord* record = set.records.find(entry.name);
    ASSERT_NE(record, nullptr) << entry.name;
    const std::vector<FamilyTable> tables = record->tables();
    EXPECT_FALSE(tables.empty()) << entry.name << "'s record makes no table";
    for (const FamilyTable& table : tables) {
      const nlohmann::json in_summary = summary_table(s, table.name);
      ASSERT_FALSE(in_summary.is_null()) << table.name << " is not in the summary";
      EXPECT_EQ(in_summary.at("family"), entry.name);
      EXPECT_EQ(in_summary.at("headers").get<Cells>(), table.headers) << table.name;
      EXPECT_EQ(in_summary.at("rows").get<std::vector<Cells>>(), table.rows) << table.name;
      const auto want = expected.find(table.name);
      ASSERT_NE(want, expected.end()) << "no expectation for " << table.name << ": add one";
      std::printf("%s:", table.name.c_str());
      for (std::size_t c = 0; c < table.headers.size(); ++c)
        std::printf(" %s=%s", table.headers[c].c_str(),
                    table.rows.empty() ? "?" : table.rows.front().at(c).c_str());
      std::printf("\n");
      EXPECT_EQ(table.headers, want->second.first) << table.name;
      ASSERT_FALSE(table.rows.empty()) << table.name;
      EXPECT_EQ(table.rows.front(), want->second.second) << table.name;
      for (const Cells& row : table.rows) EXPECT_EQ(row.size(), table.headers.size()) << table.name;
      families_with_tables.insert(std::string(entry.name));
    }
  }
  EXPECT_EQ(families_with_tables.size(), 5u) << "csr_vector, ell, coo, bytes, cpu_gpu";
}

TEST(ModelSet, CsrVectorTableShowsBothCurvesOfEachVariant) {
  const nlohmann::json table = summary_table(model_set_summary(full_set()), "csr_vector");
  ASSERT_EQ(table.at("rows").size(), 2u);
  // Fig. 4's line: 1/3 * 1e-7 ms per non-zero = 3.33e-5 µs; no threshold, no banded ratio.
  EXPECT_EQ(table["rows"][1].get<Cells>(), (Cells{"256", "8", "ms_vs_sample_nnz", "4.00",
                                                  "3.33e-05", "-", "-", "70", "0.4", "1.2"}));
}

TEST(ModelSet, SummaryTablesTheCrossFamilyParts) {
  ModelSet set = full_set();
  set.launch_floor_ms = 0.0042;
  CacheResidentCorrection coo{.format = FormatId{6}, .block_size = 256, .entries_per_thread = 2};
  coo.ratio_vs_length_rows = {.widths = {1, 8, 64},
                              .rows = {1000, 100000},
                              .log_ms = {0, 0, 0, std::log(2.0), 0, 0},
                              .quality = {6, 0.1, 0.2, 1, 64}};
  coo.largest_footprint_bytes = 2 << 20;
  set.cache_resident = {coo};
  const nlohmann::json s = model_set_summary(set);
  const nlohmann::json resident = summary_table(s, "cache_resident");
  ASSERT_FALSE(resident.is_null());
  EXPECT_EQ(resident.at("family"), "cache_resident");
  // COO's variant is told apart by E, not by parameters; no lanes-per-row kernel: "-".
  EXPECT_EQ(resident["rows"][0].get<Cells>(),
            (Cells{"cuda_coo", "entries_per_thread=2", "256", "-", "1.00–2.00", "1–64 (3)",
                   "1000–100000 (2)", "-", "2.0", "6", "10.0", "20.0"}));
  EXPECT_EQ(summary_table(s, "launch_floor").at("rows").get<std::vector<Cells>>(),
            (std::vector<Cells>{{"4.20"}}));
  EXPECT_EQ(summary_table(s, "measured_refit").at("rows").get<std::vector<Cells>>(),
            (std::vector<Cells>{{"cusparse_csr", "0.333", "40"}, {"cusparse_bsr", "1.250", "7"}}));
  EXPECT_EQ(summary_table(s, "build_rates").at("rows").get<std::vector<Cells>>(),
            (std::vector<Cells>{{"cuda_ehyb", "351.2", "35.50", "16777216"},
                                {"cuda_bro_ell", "47.5", "4.75", "4194304"}}));
  EXPECT_EQ(summary_table(s, "composed_floors").at("rows").get<std::vector<Cells>>(),
            (std::vector<Cells>{{"cuda_bce", to_string(set.composed_launch_floors[0].params), "6.10"}}));
  EXPECT_EQ(summary_table(s, "row_block_waves").at("rows").get<std::vector<Cells>>(),
            (std::vector<Cells>{{"128", "1.40"}, {"512", "1.90"}}));
  std::vector<std::string> order;
  for (const nlohmann::json& table : s.at("tables")) order.push_back(table.at("name"));
  EXPECT_EQ(order, (std::vector<std::string>{"csr_vector", "ell", "coo", "bytes", "format_bytes",
                                             "cache_resident", "launch_floor", "composed_floors",
                                             "row_block_waves", "measured_refit", "build_rates"}))
      << "registry order, then the set's own parts";
}

TEST(ModelSet, SummaryLeavesOutTablesWithoutRows) {
  ModelSet set;
  set.records.put(BytesRecord{.shared = std::nullopt, .formats = {}});
  const nlohmann::json s = model_set_summary(set);
  EXPECT_TRUE(s.at("tables").empty()) << s.at("tables").dump();
}

// A record missing a field is refused naming it (and by its older model_version before that).
TEST(ModelSet, RefusesPaper003CoefficientsWithoutTheCopyBandwidth) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(set_with_every_family()));
  j["families"]["cpu_gpu"].erase("host_device_bytes_per_ms");
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "read paper 003 coefficients without host_device_bytes_per_ms";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("host_device_bytes_per_ms"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu_gpu"), std::string::npos) << e.what();
  }
}

TEST(ModelSet, JsonCarriesTheModelVersion) {
  const nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  EXPECT_EQ(j.at("model_version").get<int>(), kModelVersion);
}

TEST(ModelSet, RefusesAnotherModelVersionNamingBoth) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["model_version"] = kModelVersion + 41;
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_EQ(std::string(e.what()),
              "model set has model_version " + std::to_string(kModelVersion + 41) +
                  ", this build uses model_version " + std::to_string(kModelVersion) +
                  ": recalibrate");
  }
}

TEST(ModelSet, RefusesAnotherDeviceSignatureNamingBoth) {
  DeviceInfo other = h100_like();
  other.sm_count = 114;
  try {
    model_set_from_json(model_set_to_json(full_set()), other.signature(), Precision::fp32);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_EQ(std::string(e.what()), "model set was calibrated on device \"" +
                                         h100_like().signature() + "\", this device is \"" +
                                         other.signature() + "\": recalibrate");
  }
}

TEST(ModelSet, RefusesAnotherPrecision) {
  try {
    model_set_from_json(model_set_to_json(full_set()), h100_like().signature(), Precision::fp64);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::failed_precondition);
    EXPECT_STREQ(e.what(), "model set is for fp32, wanted fp64");
  }
}

TEST(ModelSet, ReportsAMissingFieldAsInvalidArgument) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["families"]["coo"]["variants"][0]["time_vs_nnz"].erase("slope");
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("slope"), std::string::npos) << e.what();
  }
}

// Records are read from their one field list: a record without its samples (written before
// model version 13) is refused, naming the field, and recalibrated; no samples is an empty list.
TEST(ModelSet, RefusesRecordsWithoutSamplesNamingTheField) {
  const nlohmann::json written = nlohmann::json::parse(model_set_to_json(full_set()));
  for (const char* family : {"csr_vector", "coo", "bytes"}) {
    SCOPED_TRACE(family);
    nlohmann::json j = written;
    nlohmann::json& record = j["families"][family];
    (record.contains("variants") ? record["variants"][0] : record["shared"]).erase("samples");
    try {
      model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
      ADD_FAILURE() << "read a record without samples";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("'samples'"), std::string::npos) << e.what();
    }
  }
}

TEST(ModelSet, ReadsRecordsWithAnEmptySampleListAsHavingNone) {
  ModelSet set = full_set();
  set.records.update<CsrVectorRecord>([](CsrVectorRecord& r) { r.variants.at(0).samples.clear(); });
  set.records.update<CooRecord>([](CooRecord& r) { r.variants.at(0).samples.clear(); });
  set.records.update<BytesRecord>([](BytesRecord& r) { r.shared->samples.clear(); });
  const ModelSet back =
      model_set_from_json(model_set_to_json(set), h100_like().signature(), Precision::fp32);
  EXPECT_TRUE(back.records.find<CsrVectorRecord>()->variants.at(0).samples.empty());
  EXPECT_TRUE(back.records.find<CooRecord>()->variants.at(0).samples.empty());
  EXPECT_TRUE(back.records.find<BytesRecord>()->shared->samples.empty());
  EXPECT_EQ(back.records.find<CooRecord>()->variants.at(0).time_vs_nnz,
            full_set().records.find<CooRecord>()->variants.at(0).time_vs_nnz);
}

TEST(ModelSet, RefusesASampleThatIsNotAPair) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["families"]["coo"]["variants"][0]["samples"][0] = nlohmann::json::array({1.0});
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("a sample is [x, y]"), std::string::npos) << e.what();
  }
}

TEST(ModelSet, RefusesAGridWhoseTableDoesNotMatchItsAxes) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["families"]["ell"]["variants"][0]["time_vs_width_rows"]["log_ms"].erase(0);
  EXPECT_THROW(model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32), Error);
}

TEST(ModelSet, RefusesText) {
  try {
    model_set_from_json("not json", h100_like().signature(), Precision::fp32);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

TEST(ModelSet, SummaryListsEveryFitWithQuality) {
  const nlohmann::json s = model_set_summary(full_set());
  ASSERT_EQ(s.at("fits").size(), 6u);  // csr_vector x2, ell, coo, bytes, format_bytes
  const nlohmann::json& first = s["fits"][0];
  EXPECT_EQ(first.at("family"), "csr_vector");
  EXPECT_EQ(first.at("curve"), "ms_vs_row_length");  // the piecewise conic-linear fit (Fig. 3)
  EXPECT_EQ(first.at("below").at("c2"), 3.3e-7);
  EXPECT_EQ(first.at("variant").at("threads_per_row"), 8);
  EXPECT_EQ(first.at("quality").at("sample_count"), 73);
  EXPECT_EQ(first.at("threshold_x"), 24.0);
  const nlohmann::json& coo = s["fits"][3];
  EXPECT_EQ(coo.at("family"), "coo");
  EXPECT_EQ(coo.at("slope"), 1.1e-6);
  EXPECT_EQ(coo.at("quality").at("rms_relative_error"), 0.02);
  EXPECT_NEAR(s["fits"][4].at("bandwidth_bytes_per_ms").get<double>(), 1.0 / 3.1e-10, 1e-3);
  EXPECT_FALSE(s.contains("cpu_gpu")) << "no paper 003 record, no coefficients";
}

// A bytes record of format 17 that only its parameters, lanes and floor tell apart.
FormatBytesCalibration format_17_record(FieldSet params, std::uint32_t lanes, double floor_ms) {
  return FormatBytesCalibration{.format = FormatId{17},
                                .params = std::move(params),
                                .threads_per_row = lanes,
                                .bytes = {},
                                .long_row_step_ms = 0.0,
                                .long_row_step_beyond_l2_ms = 0.0,
                                .floor_ms = floor_ms,
                                .block_row_ratio = {}};
}

TEST(OwnBytesCalibration, TakesTheRecordSharingMostOfTheCandidatesParameters) {
  // Records of (slice_height, variant): (256, 0), (256, 1). A candidate at (32, 1) runs
  // variant 1's kernel: it takes (256, 1), not the format's first record.
  const auto params = [](std::int64_t slice_height, std::int64_t variant) {
    return FieldSet({{"slice_height", slice_height}, {"variant", variant}});
  };
  const auto record = [&](std::int64_t slice_height, std::int64_t variant, double floor_ms) {
    return format_17_record(params(slice_height, variant), 0, floor_ms);
  };
  ModelSet set;
  set.records.put(BytesRecord{.shared = std::nullopt,
                              .formats = {record(256, 0, 1.0), record(256, 1, 2.0)}});
  const auto own = [&](std::int64_t slice_height, std::int64_t variant, FormatId format) {
    return own_bytes_calibration(
        set, Candidate{.format = format, .params = params(slice_height, variant), .launch = {}});
  };
  ASSERT_NE(own(256, 1, FormatId{17}), nullptr);
  EXPECT_EQ(own(256, 1, FormatId{17})->floor_ms, 2.0);  // its very parameters
  EXPECT_EQ(own(32, 1, FormatId{17})->floor_ms, 2.0);   // shares the variant
  EXPECT_EQ(own(32, 0, FormatId{17})->floor_ms, 1.0);
  EXPECT_EQ(own(32, 7, FormatId{17})->floor_ms, 1.0);  // shares nothing: the first
  EXPECT_EQ(own(256, 0, FormatId{18}), nullptr);        // another format has no record
}

TEST(OwnBytesCalibration, TakesARecordOfTheCandidatesLanesFirst) {
  // Records (slice 256, 1 lane a row) and (slice 256, 4 lanes): a 4-lane candidate at slice 32
  // takes the 4-lane record although both share its variant; a 1-lane one the 1-lane record;
  // a record of 0 lanes holds for any launch.
  const FieldSet params({{"slice_height", std::int64_t{256}}, {"variant", std::int64_t{1}}});
  const FieldSet slice_32({{"slice_height", std::int64_t{32}}, {"variant", std::int64_t{1}}});
  const auto record = [&](std::uint32_t lanes, double floor_ms) {
    return format_17_record(params, lanes, floor_ms);
  };
  ModelSet set;
  set.records.put(BytesRecord{.shared = std::nullopt, .formats = {record(1, 1.0), record(4, 4.0)}});
  const auto own = [&](const FieldSet& p, std::uint32_t lanes) {
    return own_bytes_calibration(
        set, Candidate{.format = FormatId{17}, .params = p, .launch = {.threads_per_row = lanes}});
  };
  EXPECT_EQ(own(params, 4)->floor_ms, 4.0);
  EXPECT_EQ(own(params, 1)->floor_ms, 1.0);
  EXPECT_EQ(own(slice_32, 4)->floor_ms, 4.0);
  EXPECT_EQ(own(slice_32, 1)->floor_ms, 1.0);
  ModelSet any_launch;
  any_launch.records.put(BytesRecord{.shared = std::nullopt, .formats = {record(0, 7.0)}});
  EXPECT_EQ(own_bytes_calibration(any_launch, Candidate{.format = FormatId{17},
                                                        .params = params,
                                                        .launch = {.threads_per_row = 4}})
                ->floor_ms,
            7.0);
}

}  // namespace
}  // namespace spmvd

namespace spmvd {
namespace {

TEST(HostBuildRates, KeepEachFormatsBuildOnItsLargestSample) {
  std::vector<HostBuildRate> rates;
  record_build(rates, FormatId{20}, 2.0, 1'000'000, 10'000'000);    // fixed costs dominate
  record_build(rates, FormatId{20}, 700.0, 4'000'000, 50'000'000);  // the larger sample replaces it
  record_build(rates, FormatId{20}, 900.0, 2'000'000, 20'000'000);  // a smaller one does not
  record_build(rates, FormatId{17}, 0.0, 4'000'000, 50'000'000);    // no time measured: nothing kept
  record_build(rates, FormatId{18}, 5.0, 4'000'000, 0);              // nothing on the device: nothing
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_EQ(rates[0].sample_nonzeros, 4'000'000);
  const HostBuildRate* rate = host_build_rate(rates, FormatId{20});
  ASSERT_NE(rate, nullptr);
  EXPECT_DOUBLE_EQ(rate->ns_per_nonzero, 175.0);
  EXPECT_DOUBLE_EQ(rate->ns_per_device_byte, 14.0);
  EXPECT_EQ(host_build_rate(rates, FormatId{17}), nullptr);
  // The larger of the two estimates: by its nonzeros (175 ns x 1M) where its layout is as
  // dense as the sample's, by its bytes (14 ns x 100M) where it is padded tenfold.
  EXPECT_DOUBLE_EQ(host_build_ms(*rate, 1'000'000, 12'500'000), 175.0);
  EXPECT_DOUBLE_EQ(host_build_ms(*rate, 1'000'000, 100'000'000), 1400.0);
}

TEST(ComposedLaunchFloors, TakeTheFloorOfTheCandidatesParametersElseTheNearest) {
  const std::vector<ComposedLaunchFloor> floors = {
      {.format = FormatId{14},
       .params = FieldSet::of(CudaBceParams{.boundaries = {}, .variant = 0, .resident_threads = 270336}),
       .floor_ms = 0.0051},
      {.format = FormatId{14},
       .params = FieldSet::of(CudaBceParams{.boundaries = {}, .variant = 1, .resident_threads = 270336}),
       .floor_ms = 0.0058}};
  Candidate c{.format = FormatId{14},
              .params = FieldSet::of(CudaBceParams{.boundaries = {}, .variant = 1, .resident_threads = 270336}),
              .launch = {}};
  EXPECT_DOUBLE_EQ(*composed_launch_floor_ms(floors, c), 0.0058);
  c.params = FieldSet::of(CudaBceParams{.boundaries = {4, 257}, .variant = 0, .resident_threads = 270336});
  EXPECT_DOUBLE_EQ(*composed_launch_floor_ms(floors, c), 0.0051) << "the same variant, other blocks";
  c.format = FormatId{15};
  EXPECT_FALSE(composed_launch_floor_ms(floors, c)) << "no floor of the format";
}

TEST(ComposedLaunchFloors, RefuseAFloorThatIsNoPositiveTimeNamingTheFormat) {
  nlohmann::json j = ModelSet{}.composed_launch_floors;  // []
  j.push_back({{"format", 14}, {"params", nlohmann::json::object()}, {"floor_ms", 0.0}});
  try {
    (void)j.get<std::vector<ComposedLaunchFloor>>();
    FAIL() << "a floor of 0 ms was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("of format 14"), std::string::npos) << e.what();
  }
}

TEST(RowBlockWaves, RefuseAWaveThatIsNoPositiveTimeNamingTheBlockSize) {
  nlohmann::json j = {{"block_size", 256}, {"wave_ms", -0.001}};
  try {
    (void)j.get<RowBlockWave>();
    FAIL() << "a negative wave time was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("block size 256"), std::string::npos) << e.what();
  }
  j = {{"block_size", 0}, {"wave_ms", 0.001}};
  EXPECT_THROW((void)j.get<RowBlockWave>(), std::exception) << "block size 0";
}

// The wave time of the block size, else of the calibrated one nearest it (in powers of two);
// waves by the blocks an SM holds: H100, 2048 threads and 32 blocks an SM.
TEST(RowBlockWaves, TakeTheNearestBlockSizeAndCountWavesByTheSmsThreads) {
  const std::vector<RowBlockWave> waves{{.block_size = 128, .wave_ms = 0.0014},
                                        {.block_size = 512, .wave_ms = 0.0019}};
  EXPECT_DOUBLE_EQ(*row_block_wave_ms(waves, 512), 0.0019);
  EXPECT_DOUBLE_EQ(*row_block_wave_ms(waves, 64), 0.0014);
  EXPECT_DOUBLE_EQ(*row_block_wave_ms(waves, 1024), 0.0019);
  EXPECT_FALSE(row_block_wave_ms({}, 128));
  const DeviceInfo h100{.sm_count = 132, .max_threads_per_sm = 2048, .max_blocks_per_sm = 32};
  EXPECT_EQ(concurrent_row_blocks(h100, 128), 132 * 16);
  EXPECT_EQ(concurrent_row_blocks(h100, 32), 132 * 32) << "the block limit, not 64 by threads";
  EXPECT_DOUBLE_EQ(row_block_waves(h100, 1398, 512), 1398.0 / (132 * 4));
  EXPECT_DOUBLE_EQ(row_block_waves(DeviceInfo{}, 1398, 512), 0.0) << "a device that does not say";
}

TEST(HostBuildRates, RefuseARateThatIsNoPositiveNumberNamingTheFormat) {
  nlohmann::json j = {{"format", 20}, {"ns_per_nonzero", -3.0}, {"ns_per_device_byte", 1.0},
                      {"sample_nonzeros", 100}};
  try {
    (void)j.get<HostBuildRate>();
    FAIL() << "a negative rate was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("of format 20"), std::string::npos) << e.what();
  }
  j["ns_per_nonzero"] = 12.0;
  j["sample_nonzeros"] = 0;
  EXPECT_ANY_THROW((void)j.get<HostBuildRate>());
  j["sample_nonzeros"] = 100;
  j["ns_per_device_byte"] = 0.0;
  EXPECT_ANY_THROW((void)j.get<HostBuildRate>()) << "no rate a device byte";
}

}  // namespace
}  // namespace spmvd
