#pragma once
// What the family records share for their rows in `spmvctl model show` (model_set_summary) and
// their pictures (model_set_plots): a calibrated kernel's variant, a fit row, a ratio grid, and
// the cells of their tables (models/family_table.hpp): numbers in a unit, ranges, grid axes,
// a fit's quality.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/format_id.hpp"
#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// {"block_size", "threads_per_row", "registers_per_thread"} of a calibrated kernel.
nlohmann::json kernel_variant_json(const CalibratedKernel& kernel);

// Appends `fit` (a record's fields) to summary["fits"] with "family", "curve", "kind" (the fit's
// form for people: "linear", "piecewise_conic_linear", "log_grid"; the records' JSON holds only
// their fields) and "variant" where it is not null.
void add_fit_row(nlohmann::json& summary, const char* family, const nlohmann::json& variant,
                 const char* curve, const char* kind, nlohmann::json fit);

// A banded / random ratio grid as a table for reading: the ratio (exp of log_ms) at each
// (axis, rows).
nlohmann::json ratio_table(const LogGridFit& grid, const char* axis);

// "_t8_b256": a kernel variant in a picture's file name ("" for neither).
std::string kernel_variant_file_suffix(const CalibratedKernel& kernel);
// ", 8 lanes/row, block 256, 40 regs": the same in a picture's title.
std::string kernel_variant_title(const CalibratedKernel& kernel);

// ---- Cells of a FamilyTable. Pure; ranges use an en dash, "1–64". ----

using TableRow = std::vector<std::string>;

// A cell with no value.
inline constexpr const char* kNoValue = "-";

// value printed with a printf spec: number_cell(1e3 * ms, "%.2f") for µs.
std::string number_cell(double value, const char* spec = "%.3g");
// A count in full; kNoValue for 0 where 0 means "none" (a library's own launch has no block).
std::string count_cell(std::int64_t value);
std::string nonzero_count_cell(std::int64_t value);
// "low–high", or the one value where they are equal.
std::string range_cell(double low, double high, const char* spec = "%.3g");
// The range of values; kNoValue where there are none.
std::string range_of_cell(std::span<const double> values, const char* spec = "%.3g");
// A grid axis: its range and point count, "1–64 (7)"; whole numbers below 10^7 in full.
std::string axis_cell(std::span<const double> values);
// The range of the ratios (y) of (x, ratio) points, "0.70–0.90"; kNoValue for none.
std::string ratio_range_cell(std::span<const SamplePoint> ratios);
// The range of a ratio grid's values (its log_ms are logs of ratios); kNoValue for none.
std::string grid_ratio_range_cell(const LogGridFit& grid);
// A format's name in this build's registry (kernels/format_registry.hpp), "format <id>" for
// an id it does not have.
std::string format_name_cell(FormatId format);

// The kernel variant's block size and lanes per row: headers "block", "lanes".
TableRow kernel_variant_cells(const CalibratedKernel& kernel);
// headers + "samples", "rms %", "max %".
TableRow with_quality_headers(TableRow headers);
// cells + the fit's sample count and its RMS and max relative error on them, in %.
TableRow with_quality_cells(TableRow cells, const FitQuality& quality);

}  // namespace spmvd
