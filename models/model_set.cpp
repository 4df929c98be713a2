#include "models/model_set.hpp"

#include <cmath>
#include <exception>
#include <string>

#include "core/error.hpp"
#include "models/fit_json.hpp"

namespace spmvd {

std::string model_set_to_json(const ModelSet& set) {
  nlohmann::json j = {{"model_version", kModelVersion},
                      {"device_signature", set.device_signature},
                      {"precision", std::string(to_string(set.precision))},
                      {"csr_vector", set.csr_vector},
                      {"ell", set.ell},
                      {"coo", set.coo},
                      {"format_bytes", set.format_bytes},
                      {"cache_resident", set.cache_resident},
                      {"launch_floor_ms", set.launch_floor_ms},
                      {"measured_refit", set.measured_refit}};
  j["bytes"] = set.bytes ? nlohmann::json(*set.bytes) : nlohmann::json(nullptr);
  j["blocked_ell"] = set.blocked_ell ? nlohmann::json(*set.blocked_ell) : nlohmann::json(nullptr);
  j["cpu_gpu"] = set.cpu_gpu ? nlohmann::json(*set.cpu_gpu) : nlohmann::json(nullptr);
  return j.dump(2);
}

namespace {

template <typename T>
std::optional<T> optional_field(const nlohmann::json& j, const char* name) {
  const nlohmann::json& value = j.at(name);
  if (value.is_null()) return std::nullopt;
  return value.get<T>();
}

}  // namespace

ModelSet model_set_from_json(const std::string& text, const std::string& expected_device_signature,
                             Precision expected_precision) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("model set JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("model_version") || !j["model_version"].is_number_integer()) {
    throw Error(ErrorCode::invalid_argument, "model set JSON: no integer model_version");
  }
  const int version = j["model_version"].get<int>();
  if (version != kModelVersion) {
    throw Error(ErrorCode::failed_precondition,
                "model set has model_version " + std::to_string(version) +
                    ", this build uses model_version " + std::to_string(kModelVersion) +
                    ": recalibrate");
  }
  ModelSet set;
  try {
    set.device_signature = j.at("device_signature").get<std::string>();
    const auto precision = parse_precision(j.at("precision").get<std::string>());
    if (!precision) {
      throw std::invalid_argument("precision \"" + j.at("precision").get<std::string>() +
                                  "\" is neither fp32 nor fp64");
    }
    set.precision = *precision;
    j.at("csr_vector").get_to(set.csr_vector);
    j.at("ell").get_to(set.ell);
    j.at("coo").get_to(set.coo);
    j.at("format_bytes").get_to(set.format_bytes);
    j.at("cache_resident").get_to(set.cache_resident);
    j.at("launch_floor_ms").get_to(set.launch_floor_ms);
    j.at("measured_refit").get_to(set.measured_refit);
    set.bytes = optional_field<BytesCalibration>(j, "bytes");
    set.blocked_ell = optional_field<BlockedEllTimeCoefficients>(j, "blocked_ell");
    set.cpu_gpu = optional_field<CpuGpuTimeCoefficients>(j, "cpu_gpu");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalid_argument, std::string("model set JSON: ") + e.what());
  }
  if (set.device_signature != expected_device_signature) {
    throw Error(ErrorCode::failed_precondition,
                "model set was calibrated on device \"" + set.device_signature +
                    "\", this device is \"" + expected_device_signature + "\": recalibrate");
  }
  if (set.precision != expected_precision) {
    throw Error(ErrorCode::failed_precondition,
                "model set is for " + std::string(to_string(set.precision)) + ", wanted " +
                    std::string(to_string(expected_precision)));
  }
  return set;
}

namespace {

nlohmann::json variant_json(const CalibratedKernel& kernel) {
  return {{"block_size", kernel.resources.threads_per_block},
          {"threads_per_row", kernel.threads_per_row},
          {"registers_per_thread", kernel.resources.registers_per_thread}};
}

// kind names the fit's form for people ("linear", "piecewise_conic_linear", "log_grid"): the
// records' JSON holds only their fields.
void add_fit(nlohmann::json& fits, const char* family, const nlohmann::json& variant,
             const char* curve, const char* kind, nlohmann::json fit) {
  fit["family"] = family;
  fit["curve"] = curve;
  fit["kind"] = kind;
  if (!variant.is_null()) fit["variant"] = variant;
  fits.push_back(std::move(fit));
}

// A banded / random ratio grid as a table for reading: the ratio (exp of log_ms) at each
// (axis, rows).
nlohmann::json ratio_table(const LogGridFit& grid, const char* axis) {
  nlohmann::json table = nlohmann::json::array();
  for (std::size_t r = 0; r < grid.rows.size(); ++r)
    for (std::size_t w = 0; w < grid.widths.size(); ++w)
      table.push_back({{axis, grid.widths[w]},
                       {"rows", grid.rows[r]},
                       {"ratio", std::exp(grid.log_ms[r * grid.widths.size() + w])}});
  return table;
}

}  // namespace

nlohmann::json model_set_summary(const ModelSet& set) {
  nlohmann::json fits = nlohmann::json::array();
  for (const CsrVectorCalibration& c : set.csr_vector) {
    nlohmann::json fig3 = c.time_vs_row_length;
    fig3["banded_ratio"] = c.banded_ratio;  // models/locality.hpp
    add_fit(fits, "csr_vector", variant_json(c.kernel), "ms_vs_row_length", "piecewise_conic_linear",
            std::move(fig3));
    add_fit(fits, "csr_vector", variant_json(c.kernel), "ms_vs_sample_nnz", "linear",
            c.time_vs_sample_nnz);
  }
  for (const EllCalibration& c : set.ell) {
    nlohmann::json grid = c.time_vs_width_rows;
    grid.erase("log_ms");  // the table is for plots (svg_plot), not for reading
    if (!c.banded_ratio_vs_width_rows.log_ms.empty())
      grid["banded_ratio_vs_width_rows"] = ratio_table(c.banded_ratio_vs_width_rows, "width");
    add_fit(fits, "ell", variant_json(c.kernel), "ms_vs_width_rows", "log_grid", std::move(grid));
  }
  for (const CooCalibration& c : set.coo) {
    nlohmann::json fit = c.time_vs_nnz;
    fit["banded_ratio"] = c.banded_ratio;
    nlohmann::json variant = variant_json(c.kernel);
    variant["entries_per_thread"] = c.entries_per_thread;  // what tells COO's variants apart
    add_fit(fits, "coo", variant, "ms_vs_nnz", "linear", std::move(fit));
  }
  if (set.bytes) {
    nlohmann::json fit = set.bytes->time_vs_bytes;
    fit["bandwidth_bytes_per_ms"] = set.bytes->bandwidth_bytes_per_ms();
    fit["l2_share_for_x"] = set.bytes->l2_share_for_x;
    fit["banded_ratio"] = set.bytes->banded_ratio;
    add_fit(fits, "bytes", nullptr, "ms_vs_bytes", "linear", std::move(fit));
  }
  for (const FormatBytesCalibration& own : set.format_bytes) {
    nlohmann::json fit = own.bytes.time_vs_bytes;
    fit["bandwidth_bytes_per_ms"] = own.bytes.bandwidth_bytes_per_ms();
    fit["banded_ratio"] = own.bytes.banded_ratio;
    fit["format"] = own.format.value;
    fit["params"] = to_string(own.params);
    fit["long_row_step_ms"] = own.long_row_step_ms;
    fit["floor_ms"] = own.floor_ms;
    add_fit(fits, "format_bytes", nullptr, "ms_vs_bytes", "linear", std::move(fit));
  }
  for (const CacheResidentCorrection& c : set.cache_resident) {
    // The grid's "log_ms" holds log(measured / predicted) at (row length, rows).
    nlohmann::json fit = c.ratio_vs_length_rows;
    fit["format"] = c.format.value;
    fit["params"] = to_string(c.params);
    fit["block_size"] = c.block_size;
    fit["threads_per_row"] = c.threads_per_row;
    fit["entries_per_thread"] = c.entries_per_thread;
    fit["largest_footprint_bytes"] = c.largest_footprint_bytes;
    if (!c.banded_ratio_vs_length_rows.log_ms.empty())
      fit["banded_ratio_vs_length_rows"] = ratio_table(c.banded_ratio_vs_length_rows, "row_length");
    add_fit(fits, "cache_resident", nullptr, "ratio_vs_length_rows", "log_grid", std::move(fit));
  }
  nlohmann::json summary = {{"model_version", kModelVersion},
                            {"device_signature", set.device_signature},
                            {"precision", std::string(to_string(set.precision))},
                            {"fits", std::move(fits)}};
  if (!set.measured_refit.empty()) summary["measured_refit"] = set.measured_refit;
  if (set.blocked_ell) summary["blocked_ell"] = *set.blocked_ell;
  if (set.cpu_gpu) summary["cpu_gpu"] = *set.cpu_gpu;
  return summary;
}

}  // namespace spmvd
