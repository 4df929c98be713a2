#pragma once
// The measured refit (issue 17, "every measurement teaches the models"): every candidate the
// tuner measures is a sample (db/plan_store.hpp MeasurementSample); from the stored samples a
// per-format multiplicative correction of the predictions is refitted and applied as the last
// correction step, "measured_refit" (models/correction_steps.cpp). docs/MODELS.md
// "measured_refit" says why a per-format median ratio.
//
// The refit works on re-predictions: each sample's candidate is predicted again from its stored
// features by the models in use with measured_refit switched off (the base), so a sample taken
// under an older refit, or an older calibration, is as good as a new one. The caller does the
// re-prediction (it has the registry and the device); this module is pure arithmetic.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/format_id.hpp"
#include "models/family_table.hpp"

namespace spmvd {

// One format's correction: predictions of the format are multiplied by factor.
struct MeasuredRefitFactor {
  FormatId format;
  double factor = 1.0;             // median of measured / base prediction over its samples
  std::uint32_t sample_count = 0;  // the samples it was fitted on
  friend bool operator==(const MeasuredRefitFactor&, const MeasuredRefitFactor&) = default;
};
void to_json(nlohmann::json& j, const MeasuredRefitFactor& v);
void from_json(const nlohmann::json& j, MeasuredRefitFactor& v);

// The factor of format in factors, 1 where it has none.
double measured_refit_factor(std::span<const MeasuredRefitFactor> factors, FormatId format);

// `spmvctl model show`'s "measured_refit" table: per format (by this build's names) its factor
// and the samples it was fitted on.
FamilyTable measured_refit_table(std::span<const MeasuredRefitFactor> factors);

// A stored sample as the refit sees it.
struct RefitSample {
  FormatId format;
  std::string tuning;         // identifies the tuning it was measured in (top-1 groups)
  std::int64_t tuned_ms = 0;  // when that tuning ran: the hold-out splits by it
  double base_ms = 0.0;       // re-predicted, measured_refit off; > 0
  double measured_ms = 0.0;   // > 0
};

struct RefitOptions {
  // A format's factor is (re)fitted only from at least this many samples: a median of fewer is
  // one kernel's noise. Formats with fewer keep the factor they have.
  std::size_t min_samples_per_format = 5;
};

// Accuracy of one format on the held-out samples.
struct FormatRefitAccuracy {
  FormatId format;
  std::size_t heldout_samples = 0;
  double median_relative_error_before = 0.0;  // |pred - measured| / measured
  double median_relative_error_after = 0.0;
  double factor_before = 1.0;  // in use
  double factor_after = 1.0;   // fitted on the older half (what the after column used)
};

struct RefitReport {
  std::size_t samples = 0;                    // usable samples given
  std::size_t fit_samples = 0;                // the older half (by tuning time)
  std::size_t heldout_samples = 0;            // the newer half, where accuracy is compared
  std::vector<FormatRefitAccuracy> formats;   // by format id; formats with held-out samples
  double median_relative_error_before = 0.0;  // over all held-out samples
  double median_relative_error_after = 0.0;
  std::size_t top1_tunings = 0;  // held-out tunings that measured at least two candidates
  double top1_agreement_before =
      0.0;  // share of those whose fastest predicted was measured fastest
  double top1_agreement_after = 0.0;
  bool accepted = false;
  std::string refusal;  // why not, when !accepted
  // When accepted: the factors to install, the ones fitted on the older half and validated on
  // the newer (formats with too few samples keep their current factor). By format id.
  std::vector<MeasuredRefitFactor> factors;
};

// Holds out the newer half of the tunings (by tuned_ms, then tuning id: deterministic), fits a
// factor per format on the older half, and compares the accuracy of the factors in use
// (current) with the fitted ones on the held-out half. Refused when the held-out median
// relative error grows or the top-1 agreement falls, or when there is nothing to compare (no
// held-out sample, no format with min_samples_per_format fit samples). Samples with a
// non-positive base or measured time are ignored. Deterministic: the result depends only on the
// samples (as a multiset) and current.
RefitReport refit_measured(std::span<const RefitSample> samples,
                           std::span<const MeasuredRefitFactor> current,
                           const RefitOptions& options = {});

// JSON of a report for `spmvctl model refit --json` (format ids; names are the caller's).
nlohmann::json refit_report_json(const RefitReport& report);

}  // namespace spmvd
