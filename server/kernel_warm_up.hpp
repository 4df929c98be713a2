#pragma once
// Every format's kernels launched once before the daemon serves: CUDA loads a kernel at its
// first launch (lazy module loading, CUDA's default since 12.2), and that first launch fell in
// whichever tuning or multiply came first. H100, 2026-12-07, docs/TUNER.md's live run: a
// format's first measurement in the daemon took 3-14 ms where the next took 0.3-0.6 (cuSPARSE
// SELL's first, 14.0 ms, was 711 SpMV-equivalents of the model-only tuning it fell in).

#include <cstddef>
#include <vector>

#include "core/csr_matrix.hpp"
#include "core/matrix_features.hpp"
#include "core/precision.hpp"
#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {

// The matrices the kernels are launched on, small enough to cost nothing, each admitted by a
// share of the formats: rows of 8 random columns and one of 1000 (the partitioned formats split
// it, their parts' kernels run), a band of rows of 8 (ELL, DIA, BRO-ELL), the same band
// renumbered at random (the reorderings: RCM, EHYB's partition) and its 4 x 4 blocked twin (BSR).
std::vector<CsrMatrix<double>> warm_up_matrices();

struct WarmUpCandidate {
  const FormatEntry* entry = nullptr;
  Candidate candidate;
};
// Every candidate each format admissible on `device` offers for `features` in `precision`
// (FormatRules::candidates); a format whose rules throw offers none.
std::vector<WarmUpCandidate> warm_up_candidates(const FormatRegistry& registry,
                                                const MatrixFeatures& features,
                                                const DeviceInfo& device, Precision precision);

struct KernelWarmUp {
  std::size_t candidates = 0;  // built and applied once
  std::size_t failed = 0;      // candidates whose build or apply threw (logged at debug)
  double ms = 0.0;             // wall time of the whole warm-up
};

// Builds every warm_up_candidates of each of warm_up_matrices() (their features as a thorough
// feature pass gives them) in both precisions on `device`, and applies each once. Nothing on a device that
// is not a GPU (no module to load). A failure is counted, not thrown: the warm-up only moves a
// cost, it decides nothing.
KernelWarmUp warm_up_kernels(const FormatRegistry& registry, Device& device);

}  // namespace spmvd
