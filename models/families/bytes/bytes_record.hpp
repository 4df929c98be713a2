#pragma once
// The bytes family's record in a ModelSet: the shared fit on cuSPARSE CSR ALG1 (CPU CSR on the
// CPU; the bytes stage) and the per-format fits (the format_bytes stage), both from
// bytes_calibration.hpp. Either may be absent; the family is calibrated where one is.

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/field_set.hpp"
#include "core/precision.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/family_table.hpp"
#include "models/svg_plot.hpp"

namespace spmvd {

struct BytesRecord {
  static constexpr std::string_view kFamily = "bytes";
  // The fallback for a format without a fit of its own: null in JSON where not calibrated.
  std::optional<BytesCalibration> shared;
  // Per format and parameters (FormatBytesCalibration): used in place of `shared`.
  std::vector<FormatBytesCalibration> formats;
  static constexpr auto kFields = std::tuple{declare_field("shared", &BytesRecord::shared),
                                             declare_field("formats", &BytesRecord::formats)};
  friend bool operator==(const BytesRecord&, const BytesRecord&) = default;
};

// The shared fit as a "bytes" row (with its bandwidth), each per-format fit as a
// "format_bytes" row (with its format, parameters, floor and long-row step).
void add_to_summary(const BytesRecord& record, nlohmann::json& summary);
// Two tables: "bytes" (the shared fit: intercept, bandwidth in GB/s, L2 share for x, banded
// ratio) and "format_bytes" (per format and parameters, with its floor and long-row step).
std::vector<FamilyTable> tables_of(const BytesRecord& record);
// The shared fit with its samples, where it has some.
std::vector<NamedSvg> plots_of(const BytesRecord& record, Precision precision);

}  // namespace spmvd
