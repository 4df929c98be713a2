#pragma once
// Formats composed of parts that other formats already run: paper 000's BCE (ELL blocks of
// rows of similar length), paper 004's strip partition (CSR vector above the separator, ELL
// below) and paper 003's CPU-GPU split (an ELL part on the GPU, a COO part on the host). Such a
// format names its parts, each a sub-matrix (core/part_features.hpp) and the candidate it runs
// as, so that
//   - the models predict it as its parts, each by the calibrated family of the format it runs
//     as (models/part_time_predictor.hpp): T = max(sum of the GPU parts, sum of the host parts),
//     the GPU parts one after another on the device's stream, the host parts concurrently with
//     them (paper 003 Algorithm 2), parts of one launch paying its fixed cost once; and
//   - it chooses its partition (OPA's boundaries, the separator, the threshold K) against
//     those same predictions (FormatRules::candidates_chosen_by), as the papers choose theirs
//     against their time models — calibrated on this GPU instead of the papers' constants.

#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/matrix_features.hpp"
#include "kernels/candidate.hpp"

namespace spmvd {

// Parts with the same launch (>= 0) run in one kernel launch: its fixed cost (launch, ramp-up,
// tail) is paid once for all of them (BCE's blocks, paper 000 Algorithm 4), not once a part.
inline constexpr int kOwnLaunch = -1;

struct FormatPart {
  enum class Runs { gpu, host };
  Runs runs = Runs::gpu;
  // The part's own rows (core/part_features.hpp part_features).
  MatrixFeatures features;
  // The part run as a format of its own: a GPU format's candidate (cuda_ell, cuda_csr_vector,
  // ...) for a GPU part, a CPU format's (cpu_coo) for a host part.
  Candidate candidate;
  // Values (of the multiply's precision: parts are decided before a precision is, so the
  // predictor sizes them) that cross PCIe every multiply on a host part's path: x to the host
  // and its rows of y back, in kHostPartCopies copies; counted in its time. 0 for a GPU part.
  std::uint64_t transfer_values = 0;
  // kOwnLaunch, or the launch the part shares with the other parts of that number.
  int launch = kOwnLaunch;
  // What a GPU part of a composition moves beyond its format's own bytes: the index bytes of a
  // row map it reads (BCE's rowNo and row lengths), and the runs of consecutive rows whose y it
  // writes through the map, each ending in a 32-byte y sector that another part writes too
  // (kScatteredRunBytes each). Priced at the shared bytes fit's rate; 0 for a part that runs
  // as its format does alone.
  std::uint64_t row_map_bytes = 0;
  std::int64_t scattered_row_runs = 0;
  // Launches the part's format makes alone that the composition does not: cuda_bro_coo scales
  // y in a launch of its own before its COO kernel, which in BRO-HYB the ELL part before it
  // does for every row. Each takes a lone launch's fixed cost off the part's time.
  int skipped_launches = 0;
  // The tasks a host part's multiply is cut into, run side by side on the host's cores: Eq. 6
  // spreads a part over nc - 1 cores, but a part of fewer tasks than that runs on fewer (the
  // split cuts its remainder into chunks of at least 4096 entries, kernels/formats/cpu_gpu_split,
  // so a remainder of a few thousand entries is one thread's serial loop). 0: every core.
  std::int64_t host_tasks = 0;
  // CUDA blocks of the part's launch that each reduce one row, or a piece of one, across all
  // their warps (BCE's block-wide rows): each a latency chain however few slots it walks, so
  // the part takes at least a calibrated time a wave of them (models/row_block_waves.hpp). 0:
  // none (the part's rows are a thread's, a few lanes' or a warp's).
  std::int64_t row_blocks = 0;
};

// One y sector written again per run of rows written through a row map.
inline constexpr std::uint64_t kScatteredRunBytes = 32;

// The copies a host part that moves bytes makes per multiply: x down, its rows of y up.
inline constexpr int kHostPartCopies = 2;

// The predicted time of one part run alone. Implemented by the models (ModelPartTimePredictor);
// tests give hand-written ones.
class PartTimePredictor {
 public:
  virtual ~PartTimePredictor() = default;
  // ms; nullopt where this device's models cannot say (not calibrated for the part's format).
  // Called from several threads at once (a composed format prices its blocks side by side).
  virtual std::optional<double> part_ms(const FormatPart& part) const = 0;
  // The part's fixed cost: what its launch takes with (almost) no work, the share of part_ms
  // that a part sharing its launch with others does not add again. 0 where not known.
  virtual double fixed_ms(const FormatPart& /*part*/) const { return 0.0; }
  // The GPU time a part that takes `ms` in its launch (part_ms_in_launch) occupies while it
  // runs beside the other parts of that launch, at most ms: ms where unknown, so that shared
  // parts add up.
  virtual double occupied_ms(const FormatPart& /*part*/, double ms) const { return ms; }
};

// What adding `part` to a launch that others already pay for costs: part_ms less its fixed
// cost (never below 0); part_ms for a part of its own launch. nullopt where part_ms is.
inline std::optional<double> part_ms_in_launch(const FormatPart& part,
                                               const PartTimePredictor& predictor) {
  const std::optional<double> ms = predictor.part_ms(part);
  if (!ms || part.launch == kOwnLaunch) return ms;
  return std::max(*ms - predictor.fixed_ms(part), 0.0);
}

}  // namespace spmvd
