#pragma once
// The two calibration stages of the bytes model (models/families/bytes/bytes_model.hpp):
//   bytes         cuSPARSE CSR ALG1 (cpu_csr on the CPU) at doubling sizes, time against the
//                 bytes the multiply moves: ModelSet::bytes, the fallback line;
//   format_bytes  the same line per format whose family is the bytes model, per distinct
//                 parameters of its first candidates, on two sizes random and banded, then its
//                 critical-path steps, its launch floor and (BSR) its blocks per block row:
//                 ModelSet::format_bytes.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/format_rules.hpp"
#include "models/calibration/stage.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/fitting.hpp"

namespace spmvd {

// BSR's format_bytes record also times its largest size at these row lengths (non-zeros, of
// dense blocks of its block size b: row_length / b blocks per block row), beside the base row
// length's 8. cuSPARSE BSR streams more bytes per ms the more blocks a block row holds: on an
// H100 4 x 4 blocks at 2 per block row moved 1.1 TB/s, at 25 (bcsstk16-x64) 2.0.
inline constexpr std::int64_t kBsrBlockRowLengths[] = {32, 128};
// And, after those, kBsrChainRows rows at these row lengths (dense blocks again): in L2, where
// a 2 x 2 BSR's time grows with the blocks of a block row as a chain, ~0.45 us a block, 0.18 at
// 4 x 4 (H100, 2026-12-06: 4096-row bands of 9, 33 and 127 blocks a block row took 7.6, 18.2 and
// 60.8 us, bcsstk16's 37 26.4 us, against bytes-fit predictions of 5-11);
// FormatBytesCalibration::block_row_chain is the line through the two.
inline constexpr std::int64_t kBsrChainRowLengths[] = {8, 64};
inline constexpr std::int64_t kBsrChainRows = 4096;
// A sample's measured time (y) over what a bytes fit predicts for the bytes it moved (x): 1 on
// the line, 0 where the fit predicts nothing positive. BSR's block-row ratio is this at each
// kBsrBlockRowLengths sample over this at the base sample, so that it keeps what blocks per
// block row change beyond the bytes (fewer block rows also mean less y and fewer row pointers,
// which the prediction counts already).
double time_over_bytes_fit(const SamplePoint& bytes_and_ms, const LinearFit& fit) noexcept;

// A record's banded ratio ρ (models/locality.hpp) at equal bytes: per banded twin, keyed by its
// random twin's x, the twin's time over what `fit` (the line through the random sizes) predicts
// for the bytes the twin itself moved. Where both twins move the same bytes this is T_banded /
// T_random on the line. Where the bytes follow the columns (BRO: a band's deltas pack into
// fewer bits) the prediction already counts the band's fewer bytes through the format's own
// features, and the plain time ratio counted them a second time.
std::vector<SamplePoint> banded_ratio_at_equal_bytes(const SplitMeasurements& split,
                                                     const LinearFit& fit);

// Distinct parameter sets per format that the format_bytes stage calibrates: the first ones
// of the format's candidates (cuSPARSE CSR ALG1 and ALG2, COO ALG1 and ALG2, SELL slice heights
// 32 and 64, BSR block sizes 2 and 4, cuda_sell's first two sort windows). None of a composed
// format (FormatRules::parts), which is predicted as its parts.
inline constexpr std::size_t kFormatBytesVariants = 2;
// The same for a format offered only once its own features are counted (BRO), spread over its
// parameters (bytes_calibration.cpp spread_params) rather than its first: BRO-ELL's first
// candidates differ by the row order alone. Two: on an H100 (2026-11-24) four records per BRO
// format predicted the memory-bound suite exactly as the two spread ones did, and each record
// adds ~5 s of host builds to a calibration.
inline constexpr std::size_t kOwnFeatureBytesVariants = 2;

// Formats the format_bytes stage fits: those whose model family is the bytes model.
bool has_format_bytes_stage(const FormatRules& rules) noexcept;

// The stages' entries in calibration_stages().
CalibrationStageSpec bytes_stage();
CalibrationStageSpec format_bytes_stage();

}  // namespace spmvd
