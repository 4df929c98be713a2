#pragma once
// A performance-model family (models/families/<name>/): the base prediction of the formats that
// name it (FormatRules::model_family). A family is built from a calibrated ModelSet and says
// whether the set holds its records; ModelPredictor then applies the correction steps
// (models/correction_steps.hpp) to what it predicts.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "core/device_info.hpp"
#include "core/matrix_features.hpp"
#include "kernels/candidate.hpp"
#include "models/model_set.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// What a family's base prediction reads. The randomness fields are inputs the correction steps
// may change before the base runs (the locality step sets both to 1, the cache-resident step
// fades the gathers' towards 1 where kappa applies).
struct PredictionInput {
  const MatrixFeatures& features;
  const Candidate& candidate;
  const DeviceInfo& device;
  // The bytes one multiply reads of the format (FormatRules::streamed_bytes), for the bytes model.
  std::optional<std::uint64_t> matrix_bytes;
  // x randomness of the candidate's gathers (models/locality.hpp: 0 a band, 1 random).
  double gather_randomness = 1.0;
  // x randomness judged by the rows' span (ELL, HYB: x_span_randomness).
  double span_randomness = 1.0;
};

class FamilyModel {
 public:
  virtual ~FamilyModel() = default;
  virtual std::string_view name() const noexcept = 0;
  // Whether the set calibrates this family; the bytes family stands in where it does not.
  virtual bool calibrated() const noexcept = 0;
  // The base prediction, before the correction steps. Pure and thread-safe. Throws
  // Error(failed_precondition) when not calibrated, Error(invalid_argument) when the candidate
  // cannot launch.
  virtual Prediction predict_ms(const PredictionInput& input) const = 0;

  // Hooks of the correction steps, for the families they concern:
  // E of the candidate's launch, by which the cache-resident corrections of this family's
  // kernels are keyed (COO); 0 for the others.
  virtual double entries_per_thread(const MatrixFeatures& features,
                                    const Candidate& candidate) const;
  // The least time the candidate takes however idle the GPU is (the launch plus its longest
  // row's walk); nullopt where the family has no such bound.
  virtual std::optional<double> critical_path_ms(const MatrixFeatures& features,
                                                 const Candidate& candidate,
                                                 const DeviceInfo& device) const;
  // The segmented-COO kernel part of the candidate: the rows it writes and the entries it
  // reduces (the coo_row_writes step); nullopt for a family without one.
  struct CooPart {
    std::int64_t written_rows = 0;
    std::int64_t nnz = 0;
  };
  virtual std::optional<CooPart> coo_part(const MatrixFeatures& features,
                                          const Candidate& candidate) const;
};

// One family as the registry holds it (models/families/registry.cpp, one line each): its
// name, how its model is made from a set, and how its record is read back from the set's JSON
// (read_record<R>, models/family_record.hpp).
struct FamilyEntry {
  std::string_view name;
  // nullptr for a family no format names (cpu_gpu: composed formats' host parts read its
  // record through models/part_time_predictor.hpp).
  std::unique_ptr<FamilyModel> (*make)(const ModelSet& set);
  // nullptr for a family that keeps no record of its own (hyb reads ell's and coo's).
  std::shared_ptr<const FamilyRecord> (*read_record)(const nlohmann::json& j);
};

// Every family, in registration order (the order of `spmvctl model show`'s tables); names
// unique (a test checks it).
std::span<const FamilyEntry> model_families() noexcept;
// The entry of `name`, nullptr for an unknown one.
const FamilyEntry* find_model_family(std::string_view name) noexcept;

// The family the bytes model is registered as: every format without a calibrated family of
// its own is predicted by it.
inline constexpr std::string_view kBytesFamily = "bytes";

}  // namespace spmvd
