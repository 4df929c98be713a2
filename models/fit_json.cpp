#include "models/fit_json.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/field_set_json.hpp"

namespace spmvd {

// Each pair below lists its fields once per direction; a field added to a struct must be added
// to both (and model_version bumped: models/model_set.hpp).

// A sample as [x, y]: the records keep every measured point for plots, so keep them short.
void to_json(nlohmann::json& j, const SamplePoint& v) { j = nlohmann::json::array({v.x, v.y}); }
void from_json(const nlohmann::json& j, SamplePoint& v) {
  if (!j.is_array() || j.size() != 2) throw std::invalid_argument("a sample is [x, y]");
  j.at(0).get_to(v.x);
  j.at(1).get_to(v.y);
}

namespace {
// "samples" feeds plots (spmv-calibrate --plots, spmvctl model plot) and the CSR-vector
// throughput term, which falls back on the Fig. 3 fit where they were dropped; no other
// prediction reads
// it, so a record written without it reads as having none rather than being refused.
void read_samples(const nlohmann::json& j, std::vector<SamplePoint>& samples) {
  samples.clear();
  if (j.contains("samples")) j.at("samples").get_to(samples);
}
}  // namespace

void to_json(nlohmann::json& j, const FitQuality& v) {
  j = {{"sample_count", v.sample_count},
       {"rms_relative_error", v.rms_relative_error},
       {"max_relative_error", v.max_relative_error},
       {"x_min", v.x_min},
       {"x_max", v.x_max}};
}
void from_json(const nlohmann::json& j, FitQuality& v) {
  j.at("sample_count").get_to(v.sample_count);
  j.at("rms_relative_error").get_to(v.rms_relative_error);
  j.at("max_relative_error").get_to(v.max_relative_error);
  j.at("x_min").get_to(v.x_min);
  j.at("x_max").get_to(v.x_max);
}

void to_json(nlohmann::json& j, const LinearFit& v) {
  j = {{"kind", "linear"},
       {"intercept", v.intercept},
       {"slope", v.slope},
       {"quality", v.quality}};
}
void from_json(const nlohmann::json& j, LinearFit& v) {
  j.at("intercept").get_to(v.intercept);
  j.at("slope").get_to(v.slope);
  j.at("quality").get_to(v.quality);
}

void to_json(nlohmann::json& j, const QuadraticFit& v) {
  j = {{"kind", "quadratic"}, {"c0", v.c0}, {"c1", v.c1}, {"c2", v.c2}, {"quality", v.quality}};
}
void from_json(const nlohmann::json& j, QuadraticFit& v) {
  j.at("c0").get_to(v.c0);
  j.at("c1").get_to(v.c1);
  j.at("c2").get_to(v.c2);
  j.at("quality").get_to(v.quality);
}

void to_json(nlohmann::json& j, const PiecewiseFit& v) {
  j = {{"kind", "piecewise_conic_linear"},
       {"threshold_x", v.threshold_x},
       {"below", v.below},
       {"above", v.above},
       {"quality", v.quality}};
}
void from_json(const nlohmann::json& j, PiecewiseFit& v) {
  j.at("threshold_x").get_to(v.threshold_x);
  j.at("below").get_to(v.below);
  j.at("above").get_to(v.above);
  j.at("quality").get_to(v.quality);
}

void to_json(nlohmann::json& j, const LogGridFit& v) {
  j = {{"kind", "log_grid"},
       {"widths", v.widths},
       {"rows", v.rows},
       {"log_ms", v.log_ms},
       {"quality", v.quality}};
}
void from_json(const nlohmann::json& j, LogGridFit& v) {
  j.at("widths").get_to(v.widths);
  j.at("rows").get_to(v.rows);
  j.at("log_ms").get_to(v.log_ms);
  j.at("quality").get_to(v.quality);
  const auto ascending_positive = [](const std::vector<double>& axis) {
    return !axis.empty() && axis.front() > 0.0 &&
           std::adjacent_find(axis.begin(), axis.end(), std::greater_equal<>()) == axis.end();
  };
  if (!ascending_positive(v.widths) || !ascending_positive(v.rows) ||
      v.log_ms.size() != v.widths.size() * v.rows.size()) {
    throw std::invalid_argument(
        "log_grid: widths and rows must be non-empty, positive and ascending, and log_ms must "
        "have widths x rows entries");
  }
}

void to_json(nlohmann::json& j, const KernelResources& v) {
  j = {{"threads_per_block", v.threads_per_block},
       {"registers_per_thread", v.registers_per_thread},
       {"static_shared_bytes", v.static_shared_bytes},
       {"dynamic_shared_bytes", v.dynamic_shared_bytes}};
}
void from_json(const nlohmann::json& j, KernelResources& v) {
  j.at("threads_per_block").get_to(v.threads_per_block);
  j.at("registers_per_thread").get_to(v.registers_per_thread);
  j.at("static_shared_bytes").get_to(v.static_shared_bytes);
  j.at("dynamic_shared_bytes").get_to(v.dynamic_shared_bytes);
}

void to_json(nlohmann::json& j, const CalibratedKernel& v) {
  j = {{"resources", v.resources}, {"threads_per_row", v.threads_per_row}};
}
void from_json(const nlohmann::json& j, CalibratedKernel& v) {
  j.at("resources").get_to(v.resources);
  j.at("threads_per_row").get_to(v.threads_per_row);
}

void to_json(nlohmann::json& j, const CsrVectorCalibration& v) {
  j = {{"kernel", v.kernel},
       {"sample_strips", v.sample_strips},
       {"time_vs_row_length", v.time_vs_row_length},
       {"time_vs_sample_nnz", v.time_vs_sample_nnz},
       {"long_row_step_ms", v.long_row_step_ms},
       {"long_row_step_beyond_l2_ms", v.long_row_step_beyond_l2_ms},
       {"fixed_ms", v.fixed_ms},
       {"banded_ratio", v.banded_ratio},
       {"samples", v.samples}};
}
void from_json(const nlohmann::json& j, CsrVectorCalibration& v) {
  j.at("kernel").get_to(v.kernel);
  j.at("sample_strips").get_to(v.sample_strips);
  j.at("time_vs_row_length").get_to(v.time_vs_row_length);
  j.at("time_vs_sample_nnz").get_to(v.time_vs_sample_nnz);
  j.at("long_row_step_ms").get_to(v.long_row_step_ms);
  j.at("long_row_step_beyond_l2_ms").get_to(v.long_row_step_beyond_l2_ms);
  j.at("fixed_ms").get_to(v.fixed_ms);
  j.at("banded_ratio").get_to(v.banded_ratio);
  read_samples(j, v.samples);
  std::stable_sort(v.samples.begin(), v.samples.end(),
                   [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
}

void to_json(nlohmann::json& j, const EllCalibration& v) {
  j = {{"kernel", v.kernel}, {"time_vs_width_rows", v.time_vs_width_rows}};
  // Absent: no locality term (an empty grid is no valid log_grid).
  if (!v.banded_ratio_vs_width_rows.log_ms.empty())
    j["banded_ratio_vs_width_rows"] = v.banded_ratio_vs_width_rows;
}
void from_json(const nlohmann::json& j, EllCalibration& v) {
  j.at("kernel").get_to(v.kernel);
  j.at("time_vs_width_rows").get_to(v.time_vs_width_rows);
  v.banded_ratio_vs_width_rows = {};
  if (j.contains("banded_ratio_vs_width_rows"))
    j.at("banded_ratio_vs_width_rows").get_to(v.banded_ratio_vs_width_rows);
}

void to_json(nlohmann::json& j, const CooCalibration& v) {
  j = {{"kernel", v.kernel},
       {"entries_per_thread", v.entries_per_thread},
       {"time_vs_nnz", v.time_vs_nnz},
       {"banded_ratio", v.banded_ratio},
       {"samples", v.samples}};
}
void from_json(const nlohmann::json& j, CooCalibration& v) {
  j.at("kernel").get_to(v.kernel);
  j.at("entries_per_thread").get_to(v.entries_per_thread);
  j.at("time_vs_nnz").get_to(v.time_vs_nnz);
  j.at("banded_ratio").get_to(v.banded_ratio);
  read_samples(j, v.samples);
}

void to_json(nlohmann::json& j, const BytesCalibration& v) {
  j = {{"time_vs_bytes", v.time_vs_bytes},
       {"l2_share_for_x", v.l2_share_for_x},
       {"banded_ratio", v.banded_ratio},
       {"samples", v.samples}};
}
void from_json(const nlohmann::json& j, BytesCalibration& v) {
  j.at("time_vs_bytes").get_to(v.time_vs_bytes);
  j.at("l2_share_for_x").get_to(v.l2_share_for_x);
  j.at("banded_ratio").get_to(v.banded_ratio);
  read_samples(j, v.samples);
}

namespace {
nlohmann::json params_to_json(const FormatParams& params) {
  return field_set_to_json(params, "model set params");
}
void params_from_json(const nlohmann::json& j, FormatParams& params) {
  params = field_set_from_json(j, "model set", "params");
}
}  // namespace

void to_json(nlohmann::json& j, const FormatBytesCalibration& v) {
  j = {{"format", v.format.value},
       {"params", params_to_json(v.params)},
       {"bytes", v.bytes},
       {"long_row_step_ms", v.long_row_step_ms},
       {"long_row_step_beyond_l2_ms", v.long_row_step_beyond_l2_ms},
       {"floor_ms", v.floor_ms},
       {"block_row_ratio", v.block_row_ratio}};
}
void from_json(const nlohmann::json& j, FormatBytesCalibration& v) {
  j.at("format").get_to(v.format.value);
  params_from_json(j.at("params"), v.params);
  j.at("bytes").get_to(v.bytes);
  j.at("long_row_step_ms").get_to(v.long_row_step_ms);
  j.at("long_row_step_beyond_l2_ms").get_to(v.long_row_step_beyond_l2_ms);
  j.at("floor_ms").get_to(v.floor_ms);
  j.at("block_row_ratio").get_to(v.block_row_ratio);
}

void to_json(nlohmann::json& j, const CacheResidentCorrection& v) {
  j = {{"format", v.format.value},
       {"params", params_to_json(v.params)},
       {"block_size", v.block_size},
       {"threads_per_row", v.threads_per_row},
       {"entries_per_thread", v.entries_per_thread},
       {"ratio_vs_length_rows", v.ratio_vs_length_rows},
       {"largest_footprint_bytes", v.largest_footprint_bytes}};
  // Absent: no in-L2 locality term (an empty grid is no valid log_grid).
  if (!v.banded_ratio_vs_length_rows.log_ms.empty())
    j["banded_ratio_vs_length_rows"] = v.banded_ratio_vs_length_rows;
}
void from_json(const nlohmann::json& j, CacheResidentCorrection& v) {
  j.at("format").get_to(v.format.value);
  params_from_json(j.at("params"), v.params);
  j.at("block_size").get_to(v.block_size);
  j.at("threads_per_row").get_to(v.threads_per_row);
  j.at("entries_per_thread").get_to(v.entries_per_thread);
  j.at("ratio_vs_length_rows").get_to(v.ratio_vs_length_rows);
  j.at("largest_footprint_bytes").get_to(v.largest_footprint_bytes);
  v.banded_ratio_vs_length_rows = {};
  if (j.contains("banded_ratio_vs_length_rows"))
    j.at("banded_ratio_vs_length_rows").get_to(v.banded_ratio_vs_length_rows);
}

void to_json(nlohmann::json& j, const BlockedEllTimeCoefficients& v) {
  j = {{"transfer_elements_per_ms", v.transfer_elements_per_ms},
       {"sm_elements_per_ms", v.sm_elements_per_ms},
       {"lower_limit_rows", v.lower_limit_rows},
       {"sm_count", v.sm_count}};
}
void from_json(const nlohmann::json& j, BlockedEllTimeCoefficients& v) {
  j.at("transfer_elements_per_ms").get_to(v.transfer_elements_per_ms);
  j.at("sm_elements_per_ms").get_to(v.sm_elements_per_ms);
  j.at("lower_limit_rows").get_to(v.lower_limit_rows);
  j.at("sm_count").get_to(v.sm_count);
}

void to_json(nlohmann::json& j, const CpuGpuTimeCoefficients& v) {
  j = {{"cpu_cores", v.cpu_cores},
       {"cpu_operations_per_ms", v.cpu_operations_per_ms},
       {"gpu_streaming_processors", v.gpu_streaming_processors},
       {"gpu_operations_per_ms_per_sp", v.gpu_operations_per_ms_per_sp}};
}
void from_json(const nlohmann::json& j, CpuGpuTimeCoefficients& v) {
  j.at("cpu_cores").get_to(v.cpu_cores);
  j.at("cpu_operations_per_ms").get_to(v.cpu_operations_per_ms);
  j.at("gpu_streaming_processors").get_to(v.gpu_streaming_processors);
  j.at("gpu_operations_per_ms_per_sp").get_to(v.gpu_operations_per_ms_per_sp);
}

}  // namespace spmvd
