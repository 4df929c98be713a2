#include "models/model_set.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "core/error.hpp"
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
  return set;
}

CpuGpuTimeCoefficients paper_003_coefficients() {
  return {.cpu_cores = 16,
          .cpu_operations_per_ms = 4.1e5,
          .gpu_streaming_processors = 132,
          .gpu_operations_per_ms_per_sp = 2.3e6,
          .host_device_bytes_per_ms = 2.4e7,
          .host_device_copy_latency_ms = 0.0085};
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

}  // namespace
}  // namespace spmvd
