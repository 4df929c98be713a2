#include "models/correction_steps.hpp"

#include <algorithm>
#include <cstdint>

#include "core/precision.hpp"
#include "models/dram_rate.hpp"
#include "models/families/bytes/bytes_record.hpp"
#include "models/families/coo/coo_model.hpp"
#include "models/families/coo/row_writes.hpp"
#include "models/families/ell/ell_record.hpp"
#include "models/locality.hpp"
#include "models/model_predictor.hpp"

namespace spmvd {
namespace {

// locality — x gathers of a band reuse neighbouring rows' sectors; random columns do not.
// Every family that takes a randomness scales its calibrated (random-column) time by the
// banded ratio its calibration measured (models/locality.hpp): on the H100, banded CSR samples
// of 8 entries a row ran in 0.35-0.5 of their random twins' time. Without this step every
// family predicts at random gathers (the input's 1).
void locality_input(StepContext& ctx) {
  ctx.matrix_gather_randomness = x_gather_randomness(
      ctx.input.features,
      ctx.rules.gather_sectors_per_nonzero(ctx.input.features, ctx.input.candidate));
  ctx.input.gather_randomness = ctx.matrix_gather_randomness;
  ctx.input.span_randomness = x_span_randomness(ctx.input.features);
}

// cache_resident — paper 004's fits are taken on matrices that stream from DRAM; below L2 each
// calibrated variant is corrected by kappa, its measured / predicted time on a grid of
// cache-resident samples (models/cache_resident.hpp), priced at the matrix's own gathers by
// the in-L2 banded ratio. kappa is measured against the random samples' predictions, so where
// it applies the base predicts at random gathers (randomness_under_correction; counting
// locality twice made small stencils, meshes and graphs 20-35 % fast). Never below the
// format's tiny sample (the floor): kappa's samples sit near it.
void cache_resident_input(StepContext& ctx) {
  if (ctx.correction == nullptr) return;
  ctx.input.gather_randomness =
      randomness_under_correction(ctx.matrix_gather_randomness, ctx.kappa_weight);
}
void cache_resident_apply(StepContext& ctx, Prediction& p) {
  if (ctx.correction == nullptr) return;
  p.ms *= correction_factor(*ctx.correction, ctx.input.features, ctx.matrix_gather_randomness,
                            ctx.footprint_bytes, ctx.l2_bytes);
  p.ms = std::max(p.ms, ctx.floor_ms);
  ctx.kappa_applied = true;
}

// coo_row_writes — the segmented COO kernel reads and writes back each row it finishes; the
// COO samples have kCooSampleRowLength entries in every row. HYB's COO part writes scattered
// rows (one y sector each) and short-row COO more rows per entry: the excess bytes
// (models/row_writes.hpp) at the shared bytes fit's DRAM rate. road-6M HYB went from 0.76 to
// 1.00-1.05 of measured on the H100 (2026-11-22, model-accuracy on the v10 suite run).
void coo_row_writes_apply(StepContext& ctx, Prediction& p) {
  const BytesRecord* bytes = ctx.set.records.find<BytesRecord>();
  if (bytes == nullptr || !bytes->shared) return;
  const std::optional<FamilyModel::CooPart> part =
      ctx.family.coo_part(ctx.input.features, ctx.input.candidate);
  if (!part) return;
  p.ms += coo_row_write_excess_bytes(ctx.input.features.rows, part->written_rows, part->nnz,
                                     static_cast<std::int64_t>(value_bytes(ctx.set.precision)),
                                     kCooSampleRowLength) *
          bytes->shared->time_vs_bytes.slope;
}

// bsr_block_rows — cuSPARSE BSR streams more bytes per ms the more blocks a block row holds:
// on an H100 4 x 4 blocks at 2 per block row moved 1.1 TB/s, at 25 (bcsstk16-x64) 2.0. The
// format's record keeps (time / bytes-fit prediction) at several blocks per block row
// (block_row_factor); BSR's median error went from 18 to 10.2-10.8 % (H100, model version 11).
void bsr_block_rows_apply(StepContext& ctx, Prediction& p) {
  if (!ctx.bytes_family_predicts || ctx.own_bytes == nullptr) return;
  p.ms *= block_row_factor(*ctx.own_bytes, ctx.input.features, ctx.input.candidate);
}

// bsr_block_row_chain — in L2 cuSPARSE BSR walks a block row's blocks as a chain: at 2 x 2 a
// 4096-row band of 9, 33 and 127 blocks a block row took 7.6, 18.2 and 60.8 us, bcsstk16 (37 on
// average) 26.4, against bytes-fit predictions of 5-11 (H100, 2026-12-06). The record's line
// through two in-L2 samples (block_row_chain) at the mean blocks per block row bounds the time
// from below; beyond L2 the bytes take longer and it does not bind.
void bsr_block_row_chain_apply(StepContext& ctx, Prediction& p) {
  if (!ctx.bytes_family_predicts || ctx.own_bytes == nullptr) return;
  p.ms = std::max(p.ms, block_row_chain_ms(*ctx.own_bytes, ctx.input.features,
                                           ctx.input.candidate));
}

// launch_floor — a cache-resident matrix of a few thousand rows runs at the launch latency
// (5.7 us on an H200, the latency stage's tiny sample), which extrapolated lines and per-row
// sums go below. A smooth maximum (4-norm, smooth_floor_ms) rather than max(): strictly
// increasing in the unfloored time, so candidates below the floor keep their order instead of
// tying at it. Not where the family already charges the variant's own fixed cost.
void launch_floor_apply(StepContext& ctx, Prediction& p) {
  if (!p.includes_fixed_cost) p.ms = smooth_floor_ms(p.ms, ctx.floor_ms);
}

// critical_path — kappa's samples have rows of one length, where no row waits for another,
// and a measured latency is no throughput to correct: the corrected CSR time is held above its
// longest row's walk (kappa 0.7 took ct2010's 53-long row in CSR scalar to 7.2 us, measured
// 10-11 on an H100). The family's base already holds it; this holds it after kappa.
void critical_path_apply(StepContext& ctx, Prediction& p) {
  if (!ctx.kappa_applied) return;
  if (const std::optional<double> walk =
          ctx.family.critical_path_ms(ctx.input.features, ctx.input.candidate, ctx.input.device))
    p.ms = std::max(p.ms, *walk);
}

// long_row_step — bytes say nothing of a row one thread walks alone. Where the format has such
// a critical path (SELL: the longest row sets its slice's width; BSR), the launch floor plus
// the longest row times the format's measured step bounds the time from below; calibration
// measures the step as the difference of a sample with one long row and the same sample
// without it. bcsstk16's 81-long rows take cuSPARSE SELL from its 6.4 us floor to 9.6 us.
void long_row_step_apply(StepContext& ctx, Prediction& p) {
  if (!ctx.bytes_family_predicts || ctx.own_bytes == nullptr) return;
  const double step_ms = critical_path_step_ms(ctx.own_bytes->long_row_step_ms,
                                               ctx.own_bytes->long_row_step_beyond_l2_ms,
                                               ctx.footprint_bytes, ctx.l2_bytes);
  p.ms = std::max(p.ms,
                  ctx.floor_ms + step_ms * static_cast<double>(ctx.input.features.row_length_max));
}

// dram_rate — bytes that do not fit in L2 stream from DRAM, and no multiply streams them
// faster than the fastest banded ELL sample did (dram_bytes_per_ms: 3.04 TB/s in fp32 and 2.91
// in fp64 above the launch floor on an H100). The bytes family prices a matrix at its random
// samples' time x the banded ratio, a ratio measured at 8 entries a row without padding; on
// bcsstk16-x64 (rows of 1-81, SELL slots 1.27-1.33x its non-zeros) that priced cuSPARSE SELL
// at 52 and 84 us, above 3 TB/s counted by the slots it reads, against 67-72 and 100-104
// measured (H100, 2026-12-07, version 38's suite run; its favourites went to cuSPARSE SELL,
// 1.09-1.16x the best). A bound: the launch floor and the format's DRAM bytes
// (FormatRules::dram_streamed_bytes) and both vectors once at that rate, where the multiply's
// footprint exceeds L2. Whole multiplies of the bytes family, and of the ell family: its grid
// interpolates in log(rows) between a sample inside L2 (262144 rows) and one beyond it
// (1048576), so a matrix just past L2 was priced partly at L2's rate; at the slots its warps
// walk (CudaEllRules::streamed_bytes) the unseen matrices of 56-96 MB measured 0.99-1.04 of
// the bound (banded-4M, stencil2d-9pt-4M, 4elt-x32, road-1.5M, fem-b3-4M: 1.11-1.29 of the
// grid's price; H100, model version 41, docs/TUNER.md's exhaustive run). The other families'
// samples stream from DRAM themselves, and a composed format's parts share the multiply's bytes.
void dram_rate_apply(StepContext& ctx, Prediction& p) {
  const bool streams_by_rate = ctx.bytes_family_predicts ||
                               ctx.family.name() == EllRecord::kFamily ||
                               ctx.family.name() == "hyb";
  if (!streams_by_rate || ctx.part_of_composition || !(ctx.footprint_bytes > ctx.l2_bytes)) return;
  const std::optional<double> rate = dram_bytes_per_ms(ctx.set, ctx.input.device);
  if (!rate) return;
  const std::uint64_t bytes =
      ctx.rules.dram_streamed_bytes(ctx.input.features, ctx.set.precision, ctx.input.candidate);
  p.ms = std::max(p.ms, ctx.set.launch_floor_ms +
                            dram_bytes(ctx.input.features, bytes, ctx.set.precision) / *rate);
}

// measured_refit — what the calibration's samples miss about real matrices, learnt from the
// tuner's own measurements: the format's factor, the median of measured / predicted over the
// stored samples of this device and precision (models/measured_refit.hpp, `spmvctl model
// refit`). Last, so it scales the whole prediction it was fitted against; 1 (no change) for a
// format without enough samples.
void measured_refit_apply(StepContext& ctx, Prediction& p) {
  p.ms *= measured_refit_factor(ctx.set.measured_refit, ctx.input.candidate.format);
}

// composed_floor — a composed format whose parts share one launch pays that launch's own fixed
// cost once, where its parts carry the CSR-vector launch floor: BCE reads its tile and block
// tables and each row's length before the row's slots, and writes y through rowNo, a chain of
// dependent loads its parts run alone do not have (H100, 2026-11-25: 5.1-6.4 us on matrices of
// 1-3 thousand rows, launch floor 3.7-3.9 us, predicted 1.3-1.5x fast). Measured per
// parameters on the tiny sample (models/composed_launch_floors.hpp) and applied by
// ModelPredictor's composed path (composed_time_ms), which runs no steps: this entry names it
// for --without.

// shared_launch_overlap — the parts of one launch run side by side: above the launch's fixed
// cost it takes at least its slowest part's time alone, and at least the GPU time all its parts
// occupy (the classic bound for jobs sharing a machine: the longest job, or the total area over
// the capacity), each part holding the larger of its share of the resident threads for its
// time and the memory bandwidth for its bytes. Parts that each fill the GPU, or its bandwidth,
// add up as before; BCE's blocks on a cache-resident matrix (each a few thousand rows, a short
// chain) no longer add their chains: summed, cage11's 11 blocks were predicted 3.2x its
// measured 10 us in fp64 (H100, model version 36's suite); with threads alone and not bytes,
// the memory-bound cage11-x32's 23 blocks were predicted fast and BCE took 9 favourites it did
// not deserve. Applied by composed_time_ms through ModelPartTimePredictor::occupied_ms; this
// entry names it for --without.

// row_block_waves — a part's CUDA blocks that each reduce one row (FormatPart::row_blocks:
// BCE's block-wide rows) are latency chains that a launch holds sm_count x blocks_per_sm of at
// once: the part takes at least its launch's fixed cost and a calibrated wave time per wave of
// them, one wave at least (models/row_block_waves.hpp). Its CSR-vector price counts their warps
// as independent work at full occupancy, under 1 us a wave where they measured 1.1-2.0 (rajat01,
// adder_dcop_05; H100, model version 39's suite). Applied by ModelPartTimePredictor::part_ms;
// this entry names it for --without.

constexpr CorrectionStep kSteps[] = {
    {"locality", &locality_input, nullptr},
    {"cache_resident", &cache_resident_input, nullptr},
    {"coo_row_writes", nullptr, &coo_row_writes_apply},
    {"bsr_block_rows", nullptr, &bsr_block_rows_apply},
    {"launch_floor", nullptr, &launch_floor_apply},
    // kappa multiplies the floored time (it was measured against floored predictions).
    {"cache_resident", nullptr, &cache_resident_apply},
    {"critical_path", nullptr, &critical_path_apply},
    {"long_row_step", nullptr, &long_row_step_apply},
    {"bsr_block_row_chain", nullptr, &bsr_block_row_chain_apply},
    {"dram_rate", nullptr, &dram_rate_apply},
    {"measured_refit", nullptr, &measured_refit_apply},
    {"composed_floor", nullptr, nullptr},
    {"shared_launch_overlap", nullptr, nullptr},
    {"row_block_waves", nullptr, nullptr},
};

}  // namespace

std::span<const CorrectionStep> correction_steps() noexcept { return kSteps; }

}  // namespace spmvd
