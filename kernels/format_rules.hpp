#pragma once
// A storage format (STYLE.md: MIOpen's IsApplicable / default config / IsValidPerformanceConfig).
// Each format is one folder, kernels/formats/<name>/, whose rules class derives from this and
// declares beside its rules
//   static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>&, Precision,
//                                              const Candidate&, Device&);
// defined in the folder's .cu (GPU formats, compiled only with CUDA) or .cpp (CPU formats);
// registry.cpp lists it with one line. Its parameters are its own struct, held by a Candidate as
// a FieldSet (core/format_params.hpp). Decisions are functions of (features, device info)
// alone: no rule queries the GPU, so every rule is unit-tested with a hand-written DeviceInfo;
// and no rule keeps state, so the tuner and feature extraction call formats side by side.

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/device_info.hpp"
#include "core/field_set.hpp"
#include "core/format_id.hpp"
#include "core/matrix_features.hpp"
#include "core/plan_partition.hpp"
#include "core/precision.hpp"
#include "kernels/candidate.hpp"
#include "kernels/device.hpp"
#include "kernels/format_parts.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// What a thorough feature pass computed for one format: its own features and the partitions it
// computed to size them (cuda_bro_ell's RCM order), which the matrix's builds then take from
// its BuildSource instead of computing them again (the order is deterministic).
struct ThoroughOwnFeatures {
  FieldSet features;
  std::vector<std::shared_ptr<const PlanPartition>> partitions;
};

class FormatRules {
 public:
  virtual ~FormatRules() = default;
  virtual FormatId id() const noexcept = 0;
  virtual std::string_view name() const noexcept = 0;  // stable, snake_case: "cuda_csr_vector"
  virtual bool needs_gpu() const noexcept = 0;
  // The model family that predicts this format's time (models/families/, by name).
  virtual std::string_view model_family() const noexcept = 0;

  // Can this format hold the matrix on this device within memory_budget_bytes?
  virtual bool admissible(const MatrixFeatures& features, const DeviceInfo& device,
                          Precision precision, std::uint64_t memory_budget_bytes) const = 0;
  // The launch-parameter space to sweep: concrete candidates only (this format's id in each).
  virtual std::vector<Candidate> candidates(const MatrixFeatures& features,
                                            const DeviceInfo& device) const = 0;
  // Bytes the built format occupies on the device (padding included).
  virtual std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                                     const Candidate& candidate) const = 0;
  // Bytes one multiply reads of the built format: what the bytes family's time is made of
  // (models/families/bytes). device_bytes by default; less where a kernel skips stored bytes
  // (SELL's padding after a row's last entry, whose sectors no running row shares).
  virtual std::uint64_t streamed_bytes(const MatrixFeatures& features, Precision precision,
                                       const Candidate& candidate) const {
    return device_bytes(features, precision, candidate);
  }
  // Bytes one multiply moves from DRAM where the format's bytes exceed L2: the bytes the
  // dram_rate bound streams (models/correction_steps.cpp). streamed_bytes by default; less
  // where that counts a guess on the safe side (cuSPARSE's workspace bound), more where the
  // kernel reads from DRAM what streamed_bytes leaves out (cuSPARSE SELL's padded slots).
  virtual std::uint64_t dram_streamed_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate& candidate) const {
    return streamed_bytes(features, precision, candidate);
  }
  // Is a candidate read back from the plan cache still one this format would run? The
  // default: it must be one of candidates(features, device).
  virtual bool is_valid(const Candidate& candidate, const MatrixFeatures& features,
                        const DeviceInfo& device) const;

  // Features only this format needs, computed once per matrix by feature extraction (given the
  // common ones) and kept in MatrixFeatures::format_features under name(). None by default.
  virtual std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                               const MatrixFeatures& common) const;
  // The same with the parts too costly for every tuning (FeatureEffort::thorough: a reordering
  // sized by computing it), where the format has such parts; nullopt (the default): a thorough
  // pass files own_features.
  virtual std::optional<ThoroughOwnFeatures> thorough_own_features(
      const CsrMatrix<double>& matrix, const MatrixFeatures& common) const;
  // x sectors per non-zero in the order the candidate's kernel visits the rows (the models'
  // x locality, models/locality.hpp): the matrix's own order by default; a format that
  // reorders rows says what its order gathers.
  virtual double gather_sectors_per_nonzero(const MatrixFeatures& features,
                                            const Candidate& candidate) const;

  // Composed formats (kernels/format_parts.hpp). The parts `candidate` runs as, predicted
  // part by part; empty (the default) for a format that runs as one kernel of its own family.
  virtual std::vector<FormatPart> parts(const MatrixFeatures& features,
                                        const Candidate& candidate) const;
  // The candidates of a format that chooses its partition against the predicted time of its
  // parts. The default, for every format that does not: candidates(features, device); a
  // composed format's candidates(features, device) stays its choice without models (no
  // calibration yet, the calibration's own samples).
  virtual std::vector<Candidate> candidates_chosen_by(const PartTimePredictor& predictor,
                                                      const MatrixFeatures& features,
                                                      const DeviceInfo& device) const;
  // The candidates whose parts run as many rows as possible a CUDA block each
  // (FormatPart::row_blocks), one per block size, for the calibration of a wave of row blocks
  // (models/row_block_waves.hpp) on its sample of short rows beside one long row. Empty (the
  // default) for a format that runs no row blocks.
  virtual std::vector<Candidate> row_block_candidates(const MatrixFeatures& features,
                                                      const DeviceInfo& device) const;
};

// How much a feature pass computes. standard: what every tuning can afford (one or a few walks
// of the matrix per format). thorough: also what only a tuning expecting very many multiplies
// pays back (FormatRules::thorough_own_features; docs/TUNER.md "Feature effort").
enum class FeatureEffort { standard, thorough };

// Files rules.own_features(matrix, features) (thorough_own_features where effort is thorough
// and the format has them) under the format's name in features.format_features (where the
// format has any): how feature extraction and calibration give a format what it reads through
// its own typed accessor.
// A thorough pass appends the partitions it computed to `partitions`, where given.
std::optional<FieldSet> own_features_at(
    const FormatRules& rules, const CsrMatrix<double>& matrix, const MatrixFeatures& common,
    FeatureEffort effort,
    std::vector<std::shared_ptr<const PlanPartition>>* partitions = nullptr);
void add_own_features(const FormatRules& rules, const CsrMatrix<double>& matrix,
                      MatrixFeatures& features, FeatureEffort effort = FeatureEffort::standard);

}  // namespace spmvd
