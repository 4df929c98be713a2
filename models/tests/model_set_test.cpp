#include "models/model_set.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
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
  set.csr_vector = {csr};
  LogGridFit grid;
  grid.widths = {1, 8};
  grid.rows = {1e3, 1e6};
  grid.log_ms = {std::log(0.01), std::log(0.03), std::log(0.2), std::log(1.7)};
  grid.quality = {4, 0, 0, 1, 8};
  set.ell = {{.kernel = {.resources = {.threads_per_block = 128}, .threads_per_row = 1},
              .time_vs_width_rows = grid}};
  set.coo = {{.kernel = {.resources = {.threads_per_block = 256}, .threads_per_row = 1},
              .time_vs_nnz = {.intercept = 0.02, .slope = 1.1e-6, .quality = {12, 0.02, 0.04, 1e4, 1e8}},
              .samples = {{1e4, 0.031}, {1e8, 110.0}}}};
  set.bytes = BytesCalibration{.time_vs_bytes = {.intercept = 0.005, .slope = 3.1e-10,
                                                 .quality = {20, 0.05, 0.1, 1e5, 1e10}},
                               .l2_share_for_x = 0.4,
                               .samples = {{1e5, 0.005}, {1e10, 3.2}}};
  set.blocked_ell = BlockedEllTimeCoefficients{.transfer_elements_per_ms = 3e6,
                                               .sm_elements_per_ms = 1e7,
                                               .lower_limit_rows = 192, .sm_count = 132};
  set.measured_refit = {{.format = FormatId{3}, .factor = 1.0 / 3.0, .sample_count = 40},
                        {.format = FormatId{11}, .factor = 1.25, .sample_count = 7}};
  return set;
}

TEST(ModelSet, JsonRoundTripKeepsEveryValue) {
  const ModelSet set = full_set();
  const std::string text = model_set_to_json(set);
  const ModelSet back = model_set_from_json(text, h100_like().signature(), Precision::fp32);
  EXPECT_EQ(back, set);
  EXPECT_FALSE(back.cpu_gpu.has_value());
}

TEST(ModelSet, JsonRoundTripKeepsThePaper003CoefficientsAndSummaryShowsThem) {
  ModelSet set = full_set();
  set.cpu_gpu = CpuGpuTimeCoefficients{.cpu_cores = 16, .cpu_operations_per_ms = 4.1e5,
                                       .gpu_streaming_processors = 132,
                                       .gpu_operations_per_ms_per_sp = 2.3e6,
                                       .host_device_bytes_per_ms = 2.4e7,
                                       .host_device_copy_latency_ms = 0.0085};
  const ModelSet back =
      model_set_from_json(model_set_to_json(set), h100_like().signature(), Precision::fp32);
  ASSERT_TRUE(back.cpu_gpu.has_value());
  EXPECT_EQ(*back.cpu_gpu, *set.cpu_gpu);
  EXPECT_EQ(back, set);
  const nlohmann::json s = model_set_summary(set);  // what `spmvctl model show` prints
  EXPECT_EQ(s.at("cpu_gpu").at("cpu_cores"), 16);
  EXPECT_EQ(s.at("cpu_gpu").at("cpu_operations_per_ms"), 4.1e5);
  EXPECT_EQ(s.at("cpu_gpu").at("gpu_streaming_processors"), 132);
  EXPECT_EQ(s.at("cpu_gpu").at("gpu_operations_per_ms_per_sp"), 2.3e6);
  EXPECT_EQ(s.at("cpu_gpu").at("host_device_bytes_per_ms"), 2.4e7);
  EXPECT_EQ(s.at("cpu_gpu").at("host_device_copy_latency_ms"), 0.0085);
  EXPECT_EQ(back.cpu_gpu->host_device_bytes_per_ms, 2.4e7);
}

// A set stored before the host part's copies were calibrated lacks their fields: refused by
// name (and by its older model_version before that).
TEST(ModelSet, RefusesPaper003CoefficientsWithoutTheCopyBandwidth) {
  ModelSet set = full_set();
  set.cpu_gpu = CpuGpuTimeCoefficients{.cpu_cores = 16, .cpu_operations_per_ms = 4.1e5};
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(set));
  j["cpu_gpu"].erase("host_device_bytes_per_ms");
  try {
    model_set_from_json(j.dump(), h100_like().signature(), Precision::fp32);
    FAIL() << "read paper 003 coefficients without host_device_bytes_per_ms";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("host_device_bytes_per_ms"), std::string::npos)
        << e.what();
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
  j["coo"][0]["time_vs_nnz"].erase("slope");
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
  for (const char* record : {"csr_vector", "coo", "bytes"}) {
    SCOPED_TRACE(record);
    nlohmann::json j = written;
    (j[record].is_array() ? j[record][0] : j[record]).erase("samples");
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
  set.csr_vector.at(0).samples.clear();
  set.coo.at(0).samples.clear();
  set.bytes->samples.clear();
  const ModelSet back =
      model_set_from_json(model_set_to_json(set), h100_like().signature(), Precision::fp32);
  EXPECT_TRUE(back.csr_vector.at(0).samples.empty());
  EXPECT_TRUE(back.coo.at(0).samples.empty());
  EXPECT_TRUE(back.bytes->samples.empty());
  EXPECT_EQ(back.coo.at(0).time_vs_nnz, full_set().coo.at(0).time_vs_nnz);
}

TEST(ModelSet, RefusesASampleThatIsNotAPair) {
  nlohmann::json j = nlohmann::json::parse(model_set_to_json(full_set()));
  j["coo"][0]["samples"][0] = nlohmann::json::array({1.0});
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
  j["ell"][0]["time_vs_width_rows"]["log_ms"].erase(0);
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
  ASSERT_EQ(s.at("fits").size(), 5u);  // csr_vector x2, ell, coo, bytes
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
  EXPECT_EQ(s.at("blocked_ell").at("lower_limit_rows"), 192);
}

}  // namespace
}  // namespace spmvd
