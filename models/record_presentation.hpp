#pragma once
// What the family records share for their rows in `spmvctl model show` (model_set_summary) and
// their pictures (model_set_plots): a calibrated kernel's variant, a fit row, a ratio grid.

#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace spmvd
