// The bytes family: time = launch overhead + bytes moved / fitted bandwidth
// (bytes_model.hpp), with the format's own fit where calibration made one (stage format_bytes)
// and the shared fit on cuSPARSE CSR ALG1 / CPU CSR otherwise. The family of every format
// without a model of its own, and the stand-in for a family its model set does not calibrate.

#include "models/families/bytes/bytes_family.hpp"

#include <string>

#include "core/error.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/families/bytes/bytes_record.hpp"

namespace spmvd {
namespace {

class BytesFamily final : public FamilyModel {
 public:
  explicit BytesFamily(const ModelSet& set) : set_(set), record_(set.records.find<BytesRecord>()) {}
  std::string_view name() const noexcept override { return kBytesFamily; }
  bool calibrated() const noexcept override {
    return record_ != nullptr && (record_->shared.has_value() || !record_->formats.empty());
  }
  Prediction predict_ms(const PredictionInput& in) const override {
    const FormatBytesCalibration* own = own_bytes_calibration(set_, in.candidate);
    const bool shared = record_ != nullptr && record_->shared.has_value();
    if (!shared && own == nullptr)
      throw Error(ErrorCode::failed_precondition, "no bytes model calibrated for format " +
                                                      std::to_string(in.candidate.format.value) +
                                                      " and no shared one");
    const BytesCalibration& bytes = own != nullptr ? own->bytes : *record_->shared;
    StorageBytesFn storage;
    if (in.matrix_bytes) {
      storage = [b = *in.matrix_bytes](const MatrixFeatures&, const Candidate&) { return b; };
    }
    return BytesModel(bytes, set_.precision, std::move(storage))
        .predict_ms(in.features, in.candidate, in.device, in.gather_randomness);
  }

 private:
  const ModelSet& set_;
  const BytesRecord* record_;  // in set_, which holds it immutable
};

}  // namespace

const FormatBytesCalibration* own_bytes_calibration(const ModelSet& set,
                                                    const Candidate& candidate) noexcept {
  const BytesRecord* record = set.records.find<BytesRecord>();
  if (record == nullptr) return nullptr;
  // The record of the candidate's parameters and lanes, else the nearest: one of its lanes
  // first (a layout cut for 4 lanes a row streams unlike the same layout at 1), then the one
  // sharing most parameters (the first of equals): BRO-ELL's slice-32 Hopper layout takes the
  // slice-256 Hopper record, whose kernel it runs, rather than the paper variant's.
  const auto same_lanes = [&](const FormatBytesCalibration& own) {
    return own.threads_per_row == 0 || own.threads_per_row == candidate.launch.threads_per_row;
  };
  const FormatBytesCalibration* nearest = nullptr;
  std::pair<bool, std::size_t> nearest_key{false, 0};
  for (const FormatBytesCalibration& own : record->formats) {
    if (own.format != candidate.format) continue;
    if (own.params == candidate.params && same_lanes(own)) return &own;
    const std::pair<bool, std::size_t> key{same_lanes(own),
                                           shared_field_count(own.params, candidate.params)};
    if (nearest == nullptr || key > nearest_key) {
      nearest = &own;
      nearest_key = key;
    }
  }
  return nearest;
}

std::unique_ptr<FamilyModel> make_bytes_family(const ModelSet& set) {
  return std::make_unique<BytesFamily>(set);
}

}  // namespace spmvd
