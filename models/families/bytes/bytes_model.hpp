#pragma once
// The fallback model for any format without a dedicated one (the "modern hardware" extension
// of paper 004's empirical approach): SpMV is memory-bound, so
//   time = launch overhead + bytes moved / fitted bandwidth,
// with the bytes counting the format's arrays, y, and the x gathers scaled by x-locality.
// Less trustworthy than a per-format fit: its confidence is low.

#include <tuple>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/field_set.hpp"
#include "core/format_id.hpp"
#include "core/precision.hpp"
#include "models/fitting.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

struct BytesCalibration {
  // ms against bytes moved: intercept = launch overhead (ms), slope = 1 / bandwidth (ms/byte).
  LinearFit time_vs_bytes;
  // Share of L2 that x may occupy and still be served from L2 (the matrix streams through the
  // rest). Not measured yet: 0.5 is a neutral starting point until calibration sets it.
  double l2_share_for_x = 0.5;
  std::vector<SamplePoint> samples{};  // the measured (bytes moved, ms) of the fit: for plots only
  // (bytes moved, T_banded / T_random) (models/locality.hpp); empty: no locality term.
  std::vector<SamplePoint> banded_ratio{};
  double bandwidth_bytes_per_ms() const noexcept {
    return time_vs_bytes.slope > 0.0 ? 1.0 / time_vs_bytes.slope : 0.0;
  }
  double launch_overhead_ms() const noexcept { return time_vs_bytes.intercept; }
  static constexpr auto kFields = std::tuple{
      declare_field("time_vs_bytes", &BytesCalibration::time_vs_bytes),
      declare_field("l2_share_for_x", &BytesCalibration::l2_share_for_x),
      declare_field("samples", &BytesCalibration::samples),
      declare_field("banded_ratio", &BytesCalibration::banded_ratio)};
  friend bool operator==(const BytesCalibration&, const BytesCalibration&) = default;
};

// Bytes of the format's own arrays one multiply reads; FormatRules::streamed_bytes at the model
// set's precision is the intended source.
using StorageBytesFn = std::function<std::uint64_t(const MatrixFeatures&, const Candidate&)>;

// CSR with 32-bit indices: (rows + 1) * 4 + nnz * (4 + value bytes).
std::uint64_t csr_storage_bytes_estimate(const MatrixFeatures& features, Precision precision);

// Per-format bytes efficiency: the same form fitted on the format's own samples (calibration
// stage format_bytes), for the formats without a dedicated model. The cuSPARSE SELL, BSR and
// COO kernels and cuda_sell move the same bytes at different efficiency than cuSPARSE CSR ALG1
// (cusparse_sell at 80 % median error with the shared fit on the H200).
struct FormatBytesCalibration {
  FormatId format;
  // The parameters of the candidate timed (library algorithm, slice height, block size): a
  // format gets one record per distinct parameters of its first kFormatBytesVariants
  // candidates, since cuSPARSE's algorithms of one format differ by 20-30%.
  FormatParams params{};
  // The lanes a row of the candidate timed (its launch's threads_per_row) where the format
  // offers one layout at several (BRO-ELL's Hopper layout: 1 or 4 lanes a row, the 4-lane one
  // predicted at 0.6-0.8 of its time on the 1-lane record, H100 2026-11-24 fp32); 0: the
  // record holds for any launch (the format's lanes do not change its layout).
  std::uint32_t threads_per_row = 0;
  BytesCalibration bytes;
  // Extra ms per non-zero of the longest row: the format's critical path where one thread (or
  // one block row) walks a row alone — SELL, BSR; ~0 for formats that balance non-zeros (COO,
  // cuSPARSE CSR). Measured as a sample with one long row against the same sample without it,
  // twice, because each step is a dependent load whose latency depends on where the row lives:
  // in a small sample (kLongRowLength-row, in L2) and in the largest bytes sample (its
  // kLongRowLength-long row streams from DRAM beside the rest). On the H200 cuSPARSE SELL
  // steps take ~40 ns in L2 and ~150 ns beyond it; cuda_sell 310 and 720 ns.
  double long_row_step_ms = 0.0;
  double long_row_step_beyond_l2_ms = 0.0;
  // The format's own launch floor: its time on the latency stage's tiny sample. Libraries that
  // launch several kernels per multiply (cuSPARSE BSR) sit well above the CSR-vector floor.
  double floor_ms = 0.0;
  // BSR: (blocks per block row, (time / bytes-fit prediction) over the same at the base
  // samples' blocks per block row) at the largest size (calibration's kBsrBlockRowLengths):
  // what blocks per block row change beyond the bytes they move. 1 at the first point, where
  // the bytes fit holds. Empty for other formats, or no such term.
  std::vector<SamplePoint> block_row_ratio{};
  // BSR: ms against blocks per block row in L2 (calibration's kBsrChainRowLengths samples), a
  // lower bound where few block rows leave each one's chain of blocks the critical path
  // (correction step bsr_block_row_chain). Zero for other formats.
  LinearFit block_row_chain{};
  static constexpr auto kFields = std::tuple{
      declare_field("format", &FormatBytesCalibration::format),
      declare_field("params", &FormatBytesCalibration::params),
      declare_field("threads_per_row", &FormatBytesCalibration::threads_per_row),
      declare_field("bytes", &FormatBytesCalibration::bytes),
      declare_field("long_row_step_ms", &FormatBytesCalibration::long_row_step_ms),
      declare_field("long_row_step_beyond_l2_ms", &FormatBytesCalibration::long_row_step_beyond_l2_ms),
      declare_field("floor_ms", &FormatBytesCalibration::floor_ms),
      declare_field("block_row_ratio", &FormatBytesCalibration::block_row_ratio),
      declare_field("block_row_chain", &FormatBytesCalibration::block_row_chain)};
  friend bool operator==(const FormatBytesCalibration&, const FormatBytesCalibration&) = default;
};

// The factor of own.block_row_ratio (a cusparse_bsr record's) at the matrix's blocks per block
// row for the candidate's block size (bsr_block_count / block rows): linear in log(blocks per
// block row) between the points, constant beyond them. 1 where the record has no ratio or the
// features do not count the candidate's blocks. Throws Error(invalid_argument) when a record
// with a ratio meets a candidate that is not cusparse_bsr's.
double block_row_factor(const FormatBytesCalibration& own, const MatrixFeatures& features,
                        const Candidate& candidate);

// A record's own launch floor: floor_ms, its time on the tiny sample; for a record with a
// block-row chain the chain's intercept, since the tiny sample's ~8 blocks a block row are
// chain the chain step prices (olm1000's 3 a block row ran 5.2 us where BSR's tiny sample took
// 6.9-7.1; H100, 2026-12-06).
double own_floor_ms(const FormatBytesCalibration& own) noexcept;

// own.block_row_chain (a cusparse_bsr record's) at the matrix's mean blocks per block row for
// the candidate's block size: a lower bound on its time (the longest block row's chain is
// longer; the features count blocks, not each block row's). 0 where the record has no chain or
// the features do not count the candidate's blocks. Throws as block_row_factor.
double block_row_chain_ms(const FormatBytesCalibration& own, const MatrixFeatures& features,
                          const Candidate& candidate);

struct BytesMoved {
  std::uint64_t matrix_bytes = 0;
  std::uint64_t x_bytes = 0;
  std::uint64_t y_bytes = 0;
  std::uint64_t total() const noexcept { return matrix_bytes + x_bytes + y_bytes; }
  friend bool operator==(const BytesMoved&, const BytesMoved&) = default;
};

// x traffic: x read once when it fits in l2_share_for_x of L2 (every later gather hits L2);
// otherwise cols * value bytes plus, scaled by mean_row_span_fraction, the excess of one
// 32-byte sector per non-zero (the DRAM access granularity, CUDA C++ Best Practices Guide
// "Coalesced Access to Global Memory"): narrow rows reuse neighbouring rows' sectors, rows that
// span all of x gather at random.
BytesMoved bytes_moved(const MatrixFeatures& features, std::uint64_t matrix_bytes,
                       const DeviceInfo& device, Precision precision,
                       double l2_share_for_x) noexcept;

class BytesModel {
 public:
  // storage_bytes empty: csr_storage_bytes_estimate.
  BytesModel(BytesCalibration calibration, Precision precision, StorageBytesFn storage_bytes = {})
      : calibration_(calibration), precision_(precision),
        storage_bytes_(std::move(storage_bytes)) {}
  std::string_view family() const noexcept { return "bytes"; }
  // At the matrix's x_gather_randomness (models/locality.hpp).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device) const;
  // The same at an explicit x randomness (1 = the random calibration samples).
  Prediction predict_ms(const MatrixFeatures& features, const Candidate& candidate,
                        const DeviceInfo& device, double randomness) const;

 private:
  BytesCalibration calibration_;
  Precision precision_;
  StorageBytesFn storage_bytes_;
};

}  // namespace spmvd
