#pragma once
// Every format's kernels launched once before the daemon serves: CUDA loads a kernel at its
// first launch (lazy module loading, CUDA's default since 12.2), and that first launch fell in
// whichever tuning or multiply came first. H100, 2026-12-07, docs/TUNER.md's live run: a
// format's first measurement in the daemon took 3-14 ms where the next took 0.3-0.6 (cuSPARSE
// SELL's first, 14.0 ms, was 711 SpMV-equivalents of the model-only tuning it fell in).

#include <cstddef>

#include "kernels/device.hpp"
#include "kernels/format_registry.hpp"

namespace spmvd {

struct KernelWarmUp {
  std::size_t candidates = 0;  // built and applied once
  std::size_t failed = 0;      // candidates whose build or apply threw (logged at debug)
  double ms = 0.0;             // wall time of the whole warm-up
};

// Builds every candidate each admissible format offers for a small matrix of mixed row lengths
// (4096 rows of 8 and one of 1000, so that the partitioned formats split it and their every
// part's kernel runs), in both precisions, on `device`, and applies each once. Nothing on a
// device that is not a GPU (no module to load). A failure is counted, not thrown: the warm-up
// only moves a cost, it decides nothing.
KernelWarmUp warm_up_kernels(const FormatRegistry& registry, Device& device);

}  // namespace spmvd
