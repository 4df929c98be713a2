#include "models/model_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "models/df_split.hpp"
#include "models/hyb_model.hpp"
#include "models/locality.hpp"
#include "models/row_writes.hpp"

namespace spmvd {

std::string_view to_string(ModelFamily family) noexcept {
  switch (family) {
    case ModelFamily::csr_vector: return "csr_vector";
    case ModelFamily::ell: return "ell";
    case ModelFamily::coo: return "coo";
    case ModelFamily::hyb: return "hyb";
    case ModelFamily::other: return "other";
  }
  return "unknown";
}

ModelPredictor::ModelPredictor(ModelSet set)
    : set_(std::move(set)),
      csr_vector_(set_.csr_vector, set_.precision),
      ell_(set_.ell),
      coo_(set_.coo) {}

const FormatBytesCalibration* own_bytes_calibration(const ModelSet& set,
                                                    const Candidate& candidate) noexcept {
  const FormatBytesCalibration* first = nullptr;
  for (const FormatBytesCalibration& own : set.format_bytes) {
    if (own.format != candidate.format) continue;
    if (own.params == candidate.params) return &own;
    if (first == nullptr) first = &own;
  }
  return first;
}

double smooth_floor_ms(double ms, double floor_ms) noexcept {
  if (!(floor_ms > 0.0)) return ms;
  const double a = std::max(ms, 0.0) / floor_ms;
  return floor_ms * std::sqrt(std::sqrt(1.0 + a * a * a * a));
}

Prediction ModelPredictor::predict_ms(ModelFamily family, const MatrixFeatures& features,
                                      const Candidate& candidate, const DeviceInfo& device,
                                      std::optional<std::uint64_t> matrix_bytes) const {
  const double footprint = footprint_bytes(
      features, matrix_bytes ? *matrix_bytes : csr_storage_bytes_estimate(features, set_.precision),
      set_.precision);
  const auto l2_bytes = static_cast<double>(device.l2_bytes);
  // Below L2 the DRAM-calibrated families are corrected by what the same variant measured on
  // cache-resident samples (models/cache_resident.hpp).
  const double entries_per_thread =
      family == ModelFamily::coo ? coo_entries_per_thread(features.nnz, candidate.launch) : 0.0;
  const CacheResidentCorrection* correction =
      find_correction(set_.cache_resident, candidate, entries_per_thread);
  // kappa is measured against the random samples' predictions: where it applies, the family
  // model predicts at random gathers (randomness_under_correction) and kappa prices the
  // matrix's own gathers with its in-L2 banded ratio.
  // A candidate that sorts rows by length (cuda_sell's sort window) gathers in its sorted order.
  const double gather_randomness = x_gather_randomness(features, candidate.params.sort_window);
  const double kappa_weight =
      correction != nullptr ? correction_weight(*correction, footprint, l2_bytes) : 0.0;
  Prediction p = predict_unfloored_ms(family, features, candidate, device, matrix_bytes,
                                      randomness_under_correction(gather_randomness, kappa_weight));
  // Random gathers from an x beyond L2 miss it every time: slower than the random calibration
  // samples (x at most a third of L2), which no dedicated model extrapolates (models/locality.hpp).
  if (family != ModelFamily::other && x_beyond_l2(features, device, set_.precision) &&
      gather_randomness > 0.5)
    p.confidence *= 0.8;
  double floor_ms = set_.launch_floor_ms;
  const FormatBytesCalibration* own = own_bytes_calibration(set_, candidate);
  if (own != nullptr) floor_ms = std::max(floor_ms, own->floor_ms);
  // Paper 004's fits are taken on matrices that fill the GPU; a cache-resident matrix of a few
  // thousand rows runs at the launch latency instead (5.7 us on an H200), which extrapolated
  // lines and per-row sums go below.
  // A smooth maximum (4-norm) rather than max(): strictly increasing in the unfloored time, so
  // candidates below the floor keep their order instead of tying at it.
  if (!p.includes_fixed_cost) p.ms = smooth_floor_ms(p.ms, floor_ms);
  if (correction != nullptr) {
    p.ms *= correction_factor(*correction, features, gather_randomness, footprint, l2_bytes);
    // The correction is measured on uniform samples whose predictions sit near the floor; it
    // must not take a matrix below what the format's tiny sample took.
    p.ms = std::max(p.ms, floor_ms);
    // Nor below its longest row's walk: kappa's samples have rows of one length, where no row
    // waits for another, and a measured latency is no throughput to correct (kappa 0.7 took
    // ct2010's 53-long row in CSR scalar to 7.2 us, measured 10-11 on an H100).
    if (family == ModelFamily::csr_vector && !uses_bytes_model(family))
      p.ms = std::max(p.ms, csr_vector_.critical_path_ms(features, candidate, device));
  }
  // Bytes say nothing of a row one thread walks alone. Where the format has such a critical
  // path (SELL: the longest row sets its slice's width; BSR), the launch's own latency plus
  // that walk bounds the time from below — calibration measures the walk as exactly that
  // difference (sample with the long row minus the same sample without it), so it adds to the
  // floor rather than competing with it: bcsstk16's 81-long rows take cuSPARSE SELL from its
  // 6.4 us floor to 9.6 us. A latency measured directly: no cache-resident correction on it.
  if (own != nullptr && uses_bytes_model(family)) {
    const double step_ms = critical_path_step_ms(
        own->long_row_step_ms, own->long_row_step_beyond_l2_ms, footprint, l2_bytes);
    p.ms = std::max(p.ms, floor_ms + step_ms * static_cast<double>(features.row_length_max));
  }
  return p;
}

Prediction ModelPredictor::predict_unfloored_ms(ModelFamily family,
                                                const MatrixFeatures& features,
                                                const Candidate& candidate,
                                                const DeviceInfo& device,
                                                std::optional<std::uint64_t> matrix_bytes,
                                                double randomness) const {
  if (!uses_bytes_model(family)) {
    switch (family) {
      case ModelFamily::csr_vector:
        return csr_vector_.predict_ms(features, candidate, device, randomness);
      case ModelFamily::ell: return ell_.predict_ms(features, candidate, device);
      case ModelFamily::coo: {
        Prediction p = coo_.predict_nnz_ms(features.nnz, candidate.launch, randomness);
        p.ms += coo_row_write_excess_ms(features.rows, features.rows - features.empty_rows,
                                        features.nnz);
        return p;
      }
      case ModelFamily::hyb: {
        Prediction p = HybModel(ell_, coo_).predict_ms(features, candidate, device);
        const EllCooSplit split = ell_coo_split(features, candidate.params.ell_width);
        p.ms += coo_row_write_excess_ms(features.rows, split.coo_rows, split.coo_nnz);
        return p;
      }
      case ModelFamily::other: break;
    }
  }
  const FormatBytesCalibration* own = own_bytes_calibration(set_, candidate);
  if (!set_.bytes && own == nullptr) {
    throw Error(ErrorCode::failed_precondition,
                "no calibrated model for format family " + std::string(to_string(family)) +
                    " and no bytes model to fall back on");
  }
  // The format's own bytes fit where calibration made one (stage format_bytes), else the shared
  // fit on cuSPARSE CSR ALG1 / CPU CSR.
  const BytesCalibration* bytes = own != nullptr ? &own->bytes : &*set_.bytes;
  StorageBytesFn storage;
  if (matrix_bytes) {
    storage = [bytes = *matrix_bytes](const MatrixFeatures&, const Candidate&) { return bytes; };
  }
  Prediction p = BytesModel(*bytes, set_.precision, std::move(storage))
                     .predict_ms(features, candidate, device, randomness);
  // BSR's bytes fit holds at the samples' blocks per block row; other counts stream at their
  // own rate (block_row_factor).
  if (own != nullptr) p.ms *= block_row_factor(*own, features, candidate.params.block_dim);
  return p;
}

double ModelPredictor::coo_row_write_excess_ms(std::int64_t rows, std::int64_t written_rows,
                                               std::int64_t nnz) const noexcept {
  // The shared bytes fit's DRAM rate (models/row_writes.hpp): none without that fit.
  if (!set_.bytes) return 0.0;
  return coo_row_write_excess_bytes(rows, written_rows, nnz,
                                    static_cast<std::int64_t>(value_bytes(set_.precision)),
                                    kCooSampleRowLength) *
         set_.bytes->time_vs_bytes.slope;
}

bool ModelPredictor::uses_bytes_model(ModelFamily family) const noexcept {
  switch (family) {
    case ModelFamily::csr_vector: return set_.csr_vector.empty();
    case ModelFamily::ell: return set_.ell.empty();
    case ModelFamily::coo: return set_.coo.empty();
    case ModelFamily::hyb: return set_.ell.empty() || set_.coo.empty();
    case ModelFamily::other: return true;
  }
  return true;
}

}  // namespace spmvd
