#include "models/families/bytes/bytes_calibration.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "models/calibration/sample_plan.hpp"
#include "models/sample_generators.hpp"
#include "models/families/bytes/bytes_model.hpp"

namespace spmvd {
namespace {

void plan_bytes(const FormatRegistry& registry, const DeviceInfo& device,
                const CalibrationOptions& o, std::int64_t max_nnz, CalibrationPlan& plan) {
  // cuSPARSE CSR ALG1 is the baseline and streams close to the device's bandwidth: the right
  // stand-in for the library and other formats the bytes model covers.
  const FormatId format = device.is_gpu ? kCusparseCsrFormatId : kCpuCsrFormatId;
  if (!registry.find(format)) return;
  PlannedVariant v;
  v.stage = CalibrationStage::bytes;
  v.format = format;
  v.kernel = {.resources = {}, .threads_per_row = 0};
  // Random columns only: the shared fit has no banded ratio. On an H100 (2026-11-24) twins gave
  // it ALG1's (0.6-0.9), and EHYB, the GPU format it predicts, went from 5 % to 32 % median
  // error on the memory-bound suite: EHYB's cached part reads x from shared memory, so ALG1's
  // gain from local gathers is not its gain.
  v.samples = doubling_shapes(max_nnz, o);
  plan.variants.push_back(std::move(v));
}

// One layout a format offers: its parameters and the lanes a row its launch gives them.
struct OfferedLayout {
  FormatParams params;
  std::uint32_t lanes = 0;
  friend bool operator==(const OfferedLayout&, const OfferedLayout&) = default;
};

// The distinct parameters of the format's first candidates on a sample of these features, at
// most `most` of them.
std::vector<FormatParams> format_bytes_params(const FormatRules& rules,
                                              const MatrixFeatures& features,
                                              const DeviceInfo& device,
                                              std::size_t most = kFormatBytesVariants) {
  std::vector<FormatParams> out;
  for (const Candidate& c : rules.candidates(features, device)) {
    if (out.size() == most) break;
    // A composed format is predicted as its parts (kernels/format_parts.hpp): no bytes record
    // of its own (and its partition follows each sample's DF, so no one parameter set fits all).
    if (!rules.parts(features, c).empty()) continue;
    if (std::find(out.begin(), out.end(), c.params) == out.end()) out.push_back(c.params);
  }
  return out;
}

// At most `most` of `offered`, spread over its parameters: the first, then each time the one
// sharing the fewest values with any already taken (the first of equals). BRO-ELL's first
// candidates differ by the row order alone; spread, its records reach both kernel variants and
// both slice heights, and a candidate without a record of its own takes the nearest
// (own_bytes_calibration).
std::vector<FormatParams> spread_params(const std::vector<FormatParams>& offered,
                                        std::size_t most) {
  std::vector<FormatParams> out;
  std::vector<bool> taken(offered.size(), false);
  while (out.size() < std::min(most, offered.size())) {
    std::size_t pick = offered.size();
    std::size_t pick_shared = 0;
    for (std::size_t i = 0; i < offered.size(); ++i) {
      if (taken[i]) continue;
      std::size_t shared = 0;
      for (const FormatParams& chosen : out)
        shared = std::max(shared, shared_field_count(chosen, offered[i]));
      if (pick == offered.size() || shared < pick_shared) {
        pick = i;
        pick_shared = shared;
      }
    }
    taken[pick] = true;
    out.push_back(offered[pick]);
  }
  return out;
}

// A format's distinct (parameters, lanes a row) among its candidates, in their order.
std::vector<OfferedLayout> offered_layouts(const FormatRules& rules, const MatrixFeatures& features,
                                           const DeviceInfo& device) {
  std::vector<OfferedLayout> out;
  for (const Candidate& c : rules.candidates(features, device)) {
    if (!rules.parts(features, c).empty()) continue;  // composed: as format_bytes_params
    const OfferedLayout layout{c.params, c.launch.threads_per_row};
    if (std::find(out.begin(), out.end(), layout) == out.end()) out.push_back(layout);
  }
  return out;
}

// The layouts a format timed with its own features gets records for: kOwnFeatureBytesVariants
// spread over the parameters (spread_params), then, for each lane count those leave out, the
// first layout offered at it: a layout cut for 4 lanes a row is no 1-lane layout's record
// (BRO-ELL's 4-lane Hopper layout ran at 1.25-1.7x what its 1-lane record predicted, H100
// 2026-11-24 fp32).
std::vector<OfferedLayout> layouts_to_time(const std::vector<OfferedLayout>& offered) {
  std::vector<FormatParams> params;
  for (const OfferedLayout& layout : offered)
    if (std::find(params.begin(), params.end(), layout.params) == params.end())
      params.push_back(layout.params);
  std::vector<OfferedLayout> out;
  for (const FormatParams& p : spread_params(params, kOwnFeatureBytesVariants))
    for (const OfferedLayout& layout : offered)
      if (layout.params == p) {
        out.push_back(layout);  // the first lanes offered with them
        break;
      }
  for (const OfferedLayout& layout : offered) {
    const bool covered = std::any_of(out.begin(), out.end(), [&](const OfferedLayout& o) {
      return o.lanes == layout.lanes;
    });
    if (!covered) out.push_back(layout);
  }
  return out;
}

// The samples a format_bytes record times after its sizes and their banded twins, in order.
enum class FormatBytesTail : std::size_t {
  in_l2_without_long_row,
  in_l2_with_long_row,
  largest_with_long_row,  // its twin without: the largest random size
  tiny,
  count
};

// BSR's samples after FormatBytesTail: the largest size again at each kBsrBlockRowLengths,
// then its in-L2 chain samples at each kBsrChainRowLengths.
std::size_t block_row_sample_count(const PlannedVariant& v) noexcept {
  return v.stage == CalibrationStage::format_bytes && v.format == kCusparseBsrFormatId
             ? std::size(kBsrBlockRowLengths) + std::size(kBsrChainRowLengths)
             : 0;
}

// Index of a format_bytes record's first FormatBytesTail sample.
std::size_t format_bytes_tail_start(const PlannedVariant& v) noexcept {
  return v.samples.size() - static_cast<std::size_t>(FormatBytesTail::count) -
         block_row_sample_count(v);
}

// A format_bytes record of the format's candidate with these parameters, no samples yet.
PlannedVariant format_bytes_record(FormatId format, const FormatParams& params) {
  PlannedVariant v;
  v.stage = CalibrationStage::format_bytes;
  v.format = format;
  v.kernel = {.resources = {}, .threads_per_row = 0};
  v.params = params;
  return v;
}

// The features of a small sample of `shape`'s kind (offering_features).
MatrixFeatures probe_features(const FormatRules& rules, SampleShape shape, std::uint64_t seed) {
  shape.rows = std::min<std::int64_t>(shape.rows, kInL2LongRowLength);
  shape.row_length = std::min(shape.row_length, shape.rows);
  return offering_features(rules, make_sample(shape, seed));
}

// The long row of a critical-path pair for `layout` on an in-L2 sample of `kind`'s columns
// (random, banded or a renumbered band) and row length: kInL2LongRowLength where `rules` offer
// the layout with it; else half the longest power-of-two fraction of it they do offer it with
// (kind.row_length where none above it is). A format that bounds its longest row by the mean
// (BRO-ELL, bro_ell_critical_path_bounded) refuses the samples' usual long row and is timed
// near the edge of its bound instead; half, because on the largest sample the long row adds
// less to the mean than on the in-L2 one, and the edge found there may be past the bound of
// the other.
std::int64_t long_row_for(const FormatRules& rules, const DeviceInfo& device,
                          const OfferedLayout& layout, SampleShape kind, std::uint64_t seed) {
  kind.rows = kInL2LongRowLength;
  for (std::int64_t length = kInL2LongRowLength; length > kind.row_length; length /= 2) {
    kind.long_row = length;
    const std::vector<OfferedLayout> offered =
        offered_layouts(rules, offering_features(rules, make_sample(kind, seed)), device);
    if (std::find(offered.begin(), offered.end(), layout) == offered.end()) continue;
    return length == kInL2LongRowLength ? length : std::max(length / 2, kind.row_length);
  }
  return kind.row_length;
}

// FormatBytesTail for a record whose sizes are `sizes` (the last the largest), on samples of
// the first size's kind of columns and row length: the in-L2 pair with `long_row` (0: none),
// the largest size with it, the tiny sample (of tiny_row_length entries a row).
void add_format_bytes_tail(PlannedVariant& v, std::span<const SampleShape> sizes,
                           std::int64_t long_row, std::int64_t tiny_row_length) {
  SampleShape in_l2 = sizes.front();
  in_l2.rows = kInL2LongRowLength;
  v.samples.push_back(in_l2);
  in_l2.long_row = long_row;
  v.samples.push_back(in_l2);
  SampleShape beyond_l2 = sizes.back();
  beyond_l2.long_row = long_row;
  v.samples.push_back(beyond_l2);
  SampleShape tiny = sizes.front();
  tiny.rows = kLatencySampleRows;
  tiny.row_length = tiny_row_length;
  v.samples.push_back(tiny);
}

// A record of a format offered on random columns only once its own features are counted (BRO:
// its stream sizes follow the sample's columns): the sizes random and their banded twins, each
// timed with its own features of that sample, then FormatBytesTail at the sizes' row length
// with the longest row the layout is offered with (long_row_for). Its
// critical path is BRO-ELL's: a slice's threads decode their rows serially, so the slice of
// the longest row takes ceil(longest / lanes) decode steps whatever the bytes; without the
// step, in-L2 matrices with rows of 50-830 entries (Groebner, wiki-Vote, cit-HepPh, bcsstk16)
// were predicted at 0.1-0.5 of their time, 150-230 ns a decode step (H100, 2026-11-24).
PlannedVariant own_features_variant(const FormatRules& rules, const DeviceInfo& device,
                                    const OfferedLayout& layout,
                                    std::span<const SampleShape> shapes, std::uint64_t seed) {
  PlannedVariant v = format_bytes_record(rules.id(), layout.params);
  v.kernel.threads_per_row = static_cast<int>(layout.lanes);
  v.own_features = true;
  v.samples.assign(shapes.begin(), shapes.end());
  add_banded_twins(v, {}, std::nullopt);
  add_format_bytes_tail(v, shapes, long_row_for(rules, device, layout, shapes.front(), seed),
                        shapes.front().row_length);
  return v;
}

// A record of a format offered on structure alone, timed with its own features. EHYB (METIS
// finds a band's parts under any numbering, and none in random columns) is fitted on bands
// renumbered at random (SampleShape::renumbered_band), its random end, and their banded twins:
// its x-slice gathers and y stores go through its partition's permutation, as local as the
// caller's numbering (on the H100, 2026-11-25, a fit on bands alone predicted the renumbered
// meshes at 0.43-0.65 of their time, bands and stencils at 0.8-1.13). DIA (as many diagonals
// as rows under any renumbering) gets a bands-only record (PlannedVariant::bands_only): its
// sizes banded. Then FormatBytesTail on that end's samples. The long row is
// kInL2LongRowLength where the layout is offered with it: EHYB walks a long row in one lane,
// rajat01's 1442 entries 0.14 ms where its bytes say 0.01 (H200, 2026-11-25). A format that
// bounds it there stores it by structure, not as a path one lane walks (DIA: one diagonal an
// entry; on the largest band, gigabytes), so it gets none: its pair is one shape twice and its
// steps 0. The floor: DIA's on the diagonal alone, its launch with the least work (at the
// sizes' 8 a row its tiny band took 5.4 us against 3.6 on the diagonal, and DIA measured
// 4.2-4.4 us on olm1000 and cryg2500; H100, 2026-11-25); EHYB's at the sizes' row length,
// whose entries outside their parts make the second (ER) launch real matrices have. Where the
// format's parameters follow the sample (EHYB's partition count, from its rows), each sample
// runs the candidate sharing most of the record's (format_bytes_candidate) and a prediction
// takes the nearest record (own_bytes_calibration): the record is its kernel variant's.
// EHYB's bands mix their row lengths (SampleShape::mixed_lengths): it sorts a part's rows by
// length, ties in the caller's order, so on rows of one length every part walks its rows in
// ascending caller order, all parts in step, and the y stores that share a sector arrive
// together; a real matrix's lengths interleave them and its y sectors go back to DRAM
// part-filled. H100, 2026-12-06, ncu on the cached kernel, fp64, 3.1M rows each: a renumbered
// band of 7 a row 137 us, 22.6 MB written to DRAM; delaunay_n16-x48-renumbered (6 a row) 246 us,
// 70.9 MB written (y is 25 MB), 62 cycles of load stalls an instruction against 31; its
// prediction from bands of one length was 0.49 of its time.
PlannedVariant structure_variant(const FormatRules& rules, const DeviceInfo& device,
                                 const OfferedLayout& layout, std::span<const SampleShape> shapes,
                                 bool renumbered, std::uint64_t seed) {
  PlannedVariant v = format_bytes_record(rules.id(), layout.params);
  v.kernel.threads_per_row = static_cast<int>(layout.lanes);
  v.own_features = true;
  v.bands_only = !renumbered;
  v.renumbered_bands = renumbered;
  for (SampleShape shape : shapes) {
    shape.banded = !renumbered;
    shape.renumbered_band = renumbered;
    shape.mixed_lengths = renumbered;
    v.samples.push_back(shape);
  }
  const std::vector<SampleShape> sizes = v.samples;
  if (renumbered) add_banded_twins(v, {}, std::nullopt);
  const std::int64_t long_row =
      long_row_for(rules, device, layout, sizes.front(), seed) == kInL2LongRowLength
          ? kInL2LongRowLength
          : 0;
  add_format_bytes_tail(v, sizes, long_row, renumbered ? sizes.front().row_length : 1);
  return v;
}

// One format_bytes record's samples: the two sizes random and banded (BSR: of dense blocks),
// then FormatBytesTail, then (BSR) the largest size at kBsrBlockRowLengths and the chain samples.
PlannedVariant format_bytes_variant(FormatId format, const FormatParams& params,
                                    std::span<const SampleShape> shapes) {
  PlannedVariant v = format_bytes_record(format, params);
  v.samples.assign(shapes.begin(), shapes.end());
  // BSR is a candidate only where blocks fill (CusparseBsrRules::may_fill_acceptably): its
  // bytes are fitted on matrices of dense blocks of its size, which it stores without fill.
  const bool bsr = format == kCusparseBsrFormatId;
  const std::int64_t b = bsr ? bsr_sample_block_dim(params) : 1;
  if (bsr) {
    for (SampleShape& s : v.samples) {
      s.block_dim = b;
      s.rows -= s.rows % b;
      s.row_length = std::max(s.row_length - s.row_length % b, b);
    }
  }
  const std::size_t sizes = v.samples.size();
  for (std::size_t i = 0; i < sizes; ++i) {
    SampleShape twin = v.samples[i];
    twin.banded = true;
    v.samples.push_back(twin);
  }
  // Last (FormatBytesTail): the format's critical path twice — the in-L2 pair, and the largest
  // random sample again with one long row (its twin without is that sample itself) — then the
  // tiny sample, for the format's own launch floor.
  v.samples.push_back({.rows = kInL2LongRowLength, .row_length = 1});
  v.samples.push_back(
      {.rows = kInL2LongRowLength, .row_length = 1, .long_row = kInL2LongRowLength});
  SampleShape beyond_l2 = v.samples[sizes - 1];
  beyond_l2.long_row = std::min(kLongRowLength, beyond_l2.rows);  // the CPU's samples are small
  v.samples.push_back(beyond_l2);
  v.samples.push_back({.rows = kLatencySampleRows, .row_length = 4});
  if (bsr) {
    const SampleShape& largest = v.samples[sizes - 1];
    const std::int64_t nnz = largest.rows * largest.row_length;
    for (const std::int64_t length : kBsrBlockRowLengths) {
      const std::int64_t rows = std::max(nnz / length / b, std::int64_t{1}) * b;
      v.samples.push_back({.rows = rows, .row_length = length, .block_dim = b});
    }
    for (const std::int64_t length : kBsrChainRowLengths)
      v.samples.push_back({.rows = kBsrChainRows, .row_length = length, .block_dim = b});
  }
  return v;
}

// Per-format bytes efficiency: two sizes a factor 4 apart (a line needs two), each random and
// banded. Few samples: the line is the same form as the bytes stage's, whose 8 sizes show it
// straight on the H200 from 2^21 non-zeros up.
void plan_format_bytes(const FormatRegistry& registry, const DeviceInfo& device,
                       const CalibrationOptions& o, std::int64_t max_nnz, CalibrationPlan& plan) {
  std::vector<SampleShape> shapes;
  for (const std::int64_t nnz : {std::max<std::int64_t>(max_nnz / 4, 1), max_nnz}) {
    const SampleShape shape = bytes_shape(o, nnz);
    if (shapes.empty() || shapes.back() != shape) shapes.push_back(shape);
  }
  for (const FormatEntry& entry : registry.entries()) {
    const FormatRules& rules = *entry.rules;
    const FormatId format = rules.id();
    if (!has_format_bytes_stage(rules) || rules.needs_gpu() != device.is_gpu) continue;
    const std::vector<FormatParams> random =
        format_bytes_params(rules, shape_features(shapes.front()), device);
    for (const FormatParams& params : random)
      plan.variants.push_back(format_bytes_variant(format, params, shapes));
    if (!random.empty()) continue;
    // Nothing on shape features alone: a format that needs its own features to offer a
    // candidate. If it offers one on random columns it is fitted on random samples and their
    // banded twins, timed with their own features (BRO: its sizes follow the sample's columns;
    // on the shared CSR ALG1 fit, without a banded ratio or its decode cost, BRO-ELL's paper
    // variant came out 1.2-1.35 slow on bands and stencils and 0.8 fast on random columns, H100
    // 2026-11-24); if only on bands (DIA), it is fitted on bands.
    const std::vector<OfferedLayout> own_random = layouts_to_time(
        offered_layouts(rules, probe_features(rules, shapes.front(), o.seed), device));
    for (const OfferedLayout& layout : own_random)
      plan.variants.push_back(own_features_variant(rules, device, layout, shapes, o.seed));
    if (!own_random.empty()) continue;
    // Offered on structure alone (DIA, EHYB): on renumbered bands and their twins where the
    // layout is offered on them too, else on bands.
    SampleShape band_probe = shapes.front();
    band_probe.banded = true;
    SampleShape renumbered_probe = shapes.front();
    renumbered_probe.renumbered_band = true;
    const std::vector<OfferedLayout> on_renumbered =
        offered_layouts(rules, probe_features(rules, renumbered_probe, o.seed), device);
    for (const OfferedLayout& layout : layouts_to_time(
             offered_layouts(rules, probe_features(rules, band_probe, o.seed), device))) {
      const bool renumbered =
          std::find(on_renumbered.begin(), on_renumbered.end(), layout) != on_renumbered.end();
      plan.variants.push_back(structure_variant(rules, device, layout, shapes, renumbered, o.seed));
    }
  }
}

void plan_bytes_stage(const StagePlanInput& in, CalibrationPlan& plan) {
  plan_bytes(in.registry, in.device, in.options, in.max_nnz, plan);
}

void plan_format_bytes_stage(const StagePlanInput& in, CalibrationPlan& plan) {
  plan_format_bytes(in.registry, in.device, in.options, in.max_nnz, plan);
}

Candidate bytes_candidate(const PlannedVariant& v, const SampleShape&, const MatrixFeatures&,
                          const FormatRegistry&, const DeviceInfo&) {
  Candidate c{.format = v.format, .params = {}, .launch = {}};
  if (v.format == kCusparseCsrFormatId)
    c.params = FieldSet::of(CusparseCsrParams{.library_algorithm = kCusparseSpmvCsrAlg1});
  return c;
}

Candidate format_bytes_candidate(const PlannedVariant& v, const SampleShape& shape,
                                 const MatrixFeatures& features, const FormatRegistry& registry,
                                 const DeviceInfo& device) {
  // The candidate with the record's parameters, launched as the format's rules launch it
  // for this sample. Only blocked samples carry block counts (sample_features),
  // and those fill every BSR block size, so BSR's fill rule never drops it; on the
  // critical-path samples (one entry per row) the rules see unknown blocks and offer all.
  const FormatEntry* entry = registry.find(v.format);
  const std::vector<Candidate> own =
      entry ? entry->rules->candidates(features, device) : std::vector<Candidate>{};
  // A record keyed by lanes too (own-feature records: v.kernel.threads_per_row) times them.
  const auto lanes_match = [&](const Candidate& o) {
    return v.kernel.threads_per_row == 0 ||
           o.launch.threads_per_row == static_cast<std::uint32_t>(v.kernel.threads_per_row);
  };
  auto same = std::find_if(own.begin(), own.end(), [&](const Candidate& o) {
    return o.params == v.params && lanes_match(o);
  });
  // A format timed with its own features may have parameters that follow the sample (a width
  // from its row lengths): the candidate sharing most of the record's, as a prediction finds
  // the record (own_bytes_calibration).
  if (same == own.end() && v.own_features)
    same = std::max_element(own.begin(), own.end(), [&](const Candidate& a, const Candidate& b) {
      return std::pair(lanes_match(a), shared_field_count(a.params, v.params)) <
             std::pair(lanes_match(b), shared_field_count(b.params, v.params));
    });
  if (same == own.end())
    throw Error(ErrorCode::internal,
                "calibration: format_bytes " + std::string(entry ? entry->rules->name() : "?") +
                    " offers no candidate with " + to_string(v.params) + " for a sample of " +
                    std::to_string(shape.rows) + " rows");
  return *same;
}

SampleAxis bytes_axis(const TimedSample& sample) {
  // The bytes the model will count for this multiply, as the tuner passes them
  // (FormatRules::streamed_bytes).
  const std::uint64_t matrix_bytes =
      sample.rules.streamed_bytes(sample.features, sample.precision, sample.candidate);
  return {.x = static_cast<double>(bytes_moved(sample.features, matrix_bytes, sample.device,
                                               sample.precision, BytesCalibration{}.l2_share_for_x)
                                       .total()),
          .predicted_ms = 0.0};
}

// BSR's (blocks per block row, ratio) at the largest size: the base itself (ratio 1), then each
// kBsrBlockRowLengths sample; empty for other formats. The samples are of dense blocks of the
// record's block size. The ratio is each sample's time over what the record's bytes fit
// predicts for the sample's own bytes, so that it holds what the bytes do not: a sample of
// more blocks per block row has fewer block rows (less y and row pointers) and is faster for
// that alone, which the prediction already counts (the plain time ratio counts it twice: on an
// H100, 2026-11-22, 2x2 BSR on 25-37 blocks per block row came out 0.57-0.8 of measured).
std::vector<SamplePoint> block_row_ratio(const PlannedVariant& v,
                                         const std::vector<SamplePoint>& ms,
                                         const SplitMeasurements& split,
                                         const LinearFit& bytes_fit) {
  const std::size_t count = block_row_sample_count(v);
  if (count == 0 || split.random.empty()) return {};
  const auto b = static_cast<double>(bsr_sample_block_dim(v.params));
  const double base = time_over_bytes_fit(split.random.back(), bytes_fit);
  if (!(base > 0.0)) return {};
  std::vector<SamplePoint> out{
      {static_cast<double>(split.random_shapes.back().row_length) / b, 1.0}};
  const std::size_t first = v.samples.size() - count;
  for (std::size_t s = first; s < first + std::size(kBsrBlockRowLengths); ++s)
    out.push_back({static_cast<double>(v.samples[s].row_length) / b,
                   time_over_bytes_fit(ms[s], bytes_fit) / base});
  std::sort(out.begin(), out.end(),
            [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
  return out;
}

// BSR's ms against blocks per block row through its kBsrChainRowLengths samples (the last);
// zero for other formats.
LinearFit block_row_chain(const PlannedVariant& v, const std::vector<SamplePoint>& ms) {
  if (block_row_sample_count(v) == 0) return {};
  const auto b = static_cast<double>(bsr_sample_block_dim(v.params));
  std::vector<SamplePoint> points;
  for (std::size_t s = v.samples.size() - std::size(kBsrChainRowLengths); s < v.samples.size();
       ++s)
    points.push_back({static_cast<double>(v.samples[s].row_length) / b, ms[s].y});
  return fit_linear(points);
}

void add_format_bytes(CalibrationState& state, FormatBytesCalibration own) {
  state.set.records.update<BytesRecord>(
      [&](BytesRecord& r) { r.formats.push_back(std::move(own)); });
}

void fit_bytes(const VariantMeasurements& m, CalibrationState& state) {
  state.set.records.update<BytesRecord>([&](BytesRecord& r) {
    r.shared = BytesCalibration{.time_vs_bytes = fit_linear(m.split.random),
                                .l2_share_for_x = BytesCalibration{}.l2_share_for_x,
                                .samples = m.split.random,
                                .banded_ratio = m.split.banded_ratio};
  });
}

// A record: the line through its random sizes and the banded ratio from their twins at equal
// bytes (banded_ratio_at_equal_bytes; a
// bands-only record: the line through its banded sizes, no banded ratio: its samples are the
// local end already, and its format is offered on structured matrices alone), the long-row
// steps from FormatBytesTail, the floor from its tiny sample.
void fit_format_bytes(const VariantMeasurements& m, CalibrationState& state) {
  const PlannedVariant& variant = m.variant;
  const SplitMeasurements& split = m.split;
  const std::size_t tail = format_bytes_tail_start(variant);
  const auto at = [&](FormatBytesTail t) { return m.ms[tail + static_cast<std::size_t>(t)].y; };
  // A step is the extra time of the long row over its twin without, per entry
  // beyond the one entry (or row length) the twin's row 0 had.
  const auto step = [](double with_ms, double without_ms, const SampleShape& shape) {
    const std::int64_t extra = shape.long_row - shape.row_length;
    return extra > 0 ? std::max(with_ms - without_ms, 0.0) / static_cast<double>(extra) : 0.0;
  };
  const std::size_t in_l2 = tail + static_cast<std::size_t>(FormatBytesTail::in_l2_with_long_row);
  const std::size_t beyond =
      tail + static_cast<std::size_t>(FormatBytesTail::largest_with_long_row);
  std::vector<SamplePoint> sizes = split.random;
  if (variant.bands_only) {
    sizes.assign(m.ms.begin(), m.ms.begin() + static_cast<std::ptrdiff_t>(tail));
    std::sort(sizes.begin(), sizes.end(),
              [](const SamplePoint& l, const SamplePoint& r) { return l.x < r.x; });
  }
  const LinearFit bytes_fit = fit_linear(sizes);
  add_format_bytes(
      state, {.format = variant.format,
              .params = variant.params,
              .threads_per_row = static_cast<std::uint32_t>(variant.kernel.threads_per_row),
              .bytes = BytesCalibration{.time_vs_bytes = bytes_fit,
                                        .l2_share_for_x = BytesCalibration{}.l2_share_for_x,
                                        .samples = sizes,
                                        .banded_ratio =
                                            variant.bands_only
                                                ? std::vector<SamplePoint>{}
                                                : banded_ratio_at_equal_bytes(split, bytes_fit)},
              .long_row_step_ms =
                  step(at(FormatBytesTail::in_l2_with_long_row),
                       at(FormatBytesTail::in_l2_without_long_row), variant.samples[in_l2]),
              .long_row_step_beyond_l2_ms = step(at(FormatBytesTail::largest_with_long_row),
                                                 sizes.back().y, variant.samples[beyond]),
              .floor_ms = at(FormatBytesTail::tiny),
              .block_row_ratio = block_row_ratio(variant, m.ms, split, bytes_fit),
              .block_row_chain = block_row_chain(variant, m.ms)});
}

}  // namespace

bool has_format_bytes_stage(const FormatRules& rules) noexcept {
  return rules.model_family() == kBytesFamily;
}

double time_over_bytes_fit(const SamplePoint& bytes_and_ms, const LinearFit& fit) noexcept {
  const double predicted = fit(bytes_and_ms.x);
  return predicted > 0.0 ? bytes_and_ms.y / predicted : 0.0;
}

std::vector<SamplePoint> banded_ratio_at_equal_bytes(const SplitMeasurements& split,
                                                     const LinearFit& fit) {
  std::vector<SamplePoint> out;
  for (std::size_t i = 0; i < split.banded_ratio.size() && i < split.banded_twins.size(); ++i)
    out.push_back({split.banded_ratio[i].x, time_over_bytes_fit(split.banded_twins[i], fit)});
  return out;
}

CalibrationStageSpec bytes_stage() {
  return {.stage = CalibrationStage::bytes,
          .name = "bytes",
          .plan = plan_bytes_stage,
          .candidate = bytes_candidate,
          .axis = bytes_axis,
          .fit = fit_bytes};
}

CalibrationStageSpec format_bytes_stage() {
  return {.stage = CalibrationStage::format_bytes,
          .name = "format_bytes",
          .plan = plan_format_bytes_stage,
          .candidate = format_bytes_candidate,
          .axis = bytes_axis,
          .fit = fit_format_bytes,
          .after_fits = nullptr,
          // The FormatBytesTail samples measure critical paths and a launch floor, not
          // throughput, and BSR's block-row samples another shape at the same bytes: they stay
          // out of its bytes fit.
          .fitted_samples = format_bytes_tail_start};
}

}  // namespace spmvd
