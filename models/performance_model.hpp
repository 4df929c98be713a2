#pragma once
// What a performance model predicts, the calibrated kernel variant that each calibration record
// is tagged with, and the choice of the nearest calibrated variant (models/families/).

#include <tuple>
#include <span>
#include <string>
#include <string_view>

#include "core/field_set.hpp"
#include "core/device_info.hpp"
#include "core/error.hpp"
#include "core/matrix_features.hpp"
#include "kernels/candidate.hpp"
#include "models/fitting.hpp"
#include "models/occupancy.hpp"

namespace spmvd {

struct Prediction {
  double ms = 0.0;          // predicted time of one y = A x on the device
  double confidence = 0.0;  // 0..1: how far to trust ms when ranking against other families
  // ms already holds the candidate's own measured launch cost: no launch floor on top.
  bool includes_fixed_cost = false;
  friend bool operator==(const Prediction&, const Prediction&) = default;
};

// The kernel launch a calibration was measured with: its resources (threads_per_block = the
// calibrated block size, registers from cudaFuncGetAttributes) and lanes per row.
struct CalibratedKernel {
  KernelResources resources;
  int threads_per_row = 1;  // 1 for one-thread-per-row kernels (ELL) and COO
  static constexpr auto kFields = std::tuple{
      declare_field("resources", &CalibratedKernel::resources),
      declare_field("threads_per_row", &CalibratedKernel::threads_per_row)};
  friend bool operator==(const CalibratedKernel&, const CalibratedKernel&) = default;
};


// The calibration whose kernel is closest to (block_size, threads_per_row): an exact match if
// there is one, else the nearest in log2(threads_per_row) first, then log2(block_size). A zero
// block_size or threads_per_row matches anything. `exact` reports whether it matched exactly.
// Throws Error(failed_precondition) naming `family` when `calibrations` is empty.
template <typename Calibration>
const Calibration& nearest_calibration(std::span<const Calibration> calibrations,
                                       std::uint32_t block_size, std::uint32_t threads_per_row,
                                       std::string_view family, bool& exact);

// A confidence factor from a fit's quality: 1 for a perfect fit, falling with the RMS relative
// error, never below 0.2.
double quality_factor(const FitQuality& quality) noexcept;

// |log2(wanted / have)|, 0 where either is unknown (<= 0): the distance between two launch
// shapes (block sizes, lanes per row, entries per thread).
double log2_gap(double wanted, double have) noexcept;

// How much more a step in the shape of a launch's work (lanes per row, COO's entries per
// thread) weighs than a step in block size when the nearest calibrated variant is chosen:
// the shape changes the kernel's behaviour more than the block does (paper 004 Sec. 6).
inline constexpr double kWorkShapeStepWeight = 16.0;

// ---- implementation of the template ----

double variant_distance(const CalibratedKernel& kernel, std::uint32_t block_size,
                        std::uint32_t threads_per_row) noexcept;

// variant_distance(kernel, block_size, threads_per_row) == 0, without its logarithms: each gap
// is 0 where either side is unknown (<= 0) or the two are equal.
inline bool at_variant_distance_zero(const CalibratedKernel& kernel, std::uint32_t block_size,
                                     std::uint32_t threads_per_row) noexcept {
  const auto no_gap = [](double wanted, double have) {
    return wanted <= 0.0 || have <= 0.0 || wanted == have;
  };
  return no_gap(threads_per_row, kernel.threads_per_row) &&
         no_gap(block_size, kernel.resources.threads_per_block);
}

template <typename Calibration>
const Calibration& nearest_calibration(std::span<const Calibration> calibrations,
                                       std::uint32_t block_size, std::uint32_t threads_per_row,
                                       std::string_view family, bool& exact) {
  if (calibrations.empty()) {
    throw Error(ErrorCode::failed_precondition,
                "no " + std::string(family) + " calibration in the model set");
  }
  // The first variant at distance 0 is the one the search below returns (none is nearer, and
  // a later one at 0 does not replace it): found without a logarithm per variant, as most
  // predictions are of a calibrated launch (the composed formats' thousands of parts a matrix).
  for (const Calibration& c : calibrations) {
    if (at_variant_distance_zero(c.kernel, block_size, threads_per_row)) {
      exact = true;
      return c;
    }
  }
  const Calibration* best = &calibrations.front();
  double best_distance = variant_distance(best->kernel, block_size, threads_per_row);
  for (const Calibration& c : calibrations) {
    const double d = variant_distance(c.kernel, block_size, threads_per_row);
    if (d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  exact = best_distance == 0.0;
  return *best;
}

}  // namespace spmvd
