// The ell family: paper 004's ELL grid (ell_model.hpp), for cuda_ell.

#include "models/families/ell/ell_family.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "kernels/formats/common/padding_stop_walk.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/families/csr_vector/csr_vector_record.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/families/ell/ell_record.hpp"

namespace spmvd {
namespace {

// The csr_vector variants of one lane a row (CSR scalar), whose critical path is the latency
// stage's one-lane walk; nullopt where none is calibrated.
std::optional<CsrVectorModel> one_lane_walk(const CsrVectorRecord* record, Precision precision) {
  if (record == nullptr) return std::nullopt;
  std::vector<CsrVectorCalibration> one_lane;
  for (const CsrVectorCalibration& c : record->variants)
    if (c.kernel.threads_per_row == 1) one_lane.push_back(c);
  if (one_lane.empty()) return std::nullopt;
  return CsrVectorModel(std::move(one_lane), precision);
}

class EllFamily final : public FamilyModel {
 public:
  EllFamily(const EllRecord* record, const CsrVectorRecord* csr_vector, Precision precision)
      : model_(record != nullptr ? record->variants : std::vector<EllCalibration>{}),
        calibrated_(record != nullptr && !record->variants.empty()),
        walk_(one_lane_walk(csr_vector, precision)) {}
  std::string_view name() const noexcept override { return EllRecord::kFamily; }
  bool calibrated() const noexcept override { return calibrated_; }
  // Width: cuda_ell's ell_width, or the longest row for a candidate without parameters (the
  // paper pads every row to the longest); priced as walked (ell_walked_width).
  Prediction predict_ms(const PredictionInput& in) const override {
    const std::int64_t width =
        in.candidate.params.empty()
            ? in.features.row_length_max
            : static_cast<std::int64_t>(CudaEllRules::params_of(in.candidate).ell_width);
    Prediction p = model_.predict_walked_ms(width, ell_walked_width(in.features, width),
                                            in.features.rows, in.features.nnz,
                                            in.candidate.launch.block_size, in.span_randomness);
    // The grid holds whole launches measured down to a few thousand rows, where they run at the
    // launch latency, and clamps below them: it carries its own floor. The set's floor on top
    // counted it twice (H100 and H200, 2026-11-23, model-accuracy --without launch_floor on the
    // v12 calibrations: ELL median error 9.3 -> 5.1 % and 7.6 -> 4.5 %).
    p.includes_fixed_cost = true;
    if (const std::optional<double> walk = critical_path_ms(in.features, in.candidate, in.device))
      p.ms = std::max(p.ms, *walk);
    return p;
  }
  // A row's lanes walk its slots one after another, each a column index, its x and a value, as
  // CSR scalar's thread does: the launch takes at least CSR scalar's critical path, F_1 +
  // step_1 x ceil(longest row / lanes), with the latency stage's one-lane fixed cost and step. The
  // grid's samples (rows of one length, up to 32) hold this already; a part below a few long rows,
  // priced at the slots its warps walk on average (cuda_strip's ELL part), does not (H100,
  // 2026-12-06: adder_dcop_05's and Groebner's hopper strips, whose ELL parts start at rows of 100
  // and 253, measured 2.2-3.4x their prediction without it, 1.1-1.7x with it).
  std::optional<double> critical_path_ms(const MatrixFeatures& features, const Candidate& candidate,
                                         const DeviceInfo& device) const override {
    if (!walk_) return std::nullopt;
    return walk_->critical_path_ms(features, candidate, device);
  }

 private:
  EllModel model_;
  bool calibrated_ = false;
  std::optional<CsrVectorModel> walk_;  // CSR scalar's variants, for their critical path
};

}  // namespace

std::unique_ptr<FamilyModel> make_ell_family(const ModelSet& set) {
  return std::make_unique<EllFamily>(set.records.find<EllRecord>(),
                                     set.records.find<CsrVectorRecord>(), set.precision);
}

}  // namespace spmvd
