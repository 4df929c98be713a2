#pragma once
// cuda_ehyb's own feature: whether the matrix's graph is one METIS cuts cheaply and well.
// METIS's cost per edge depends on the graph, not only its size: measured on the 2-core build
// machine (2026-11-23, single-threaded, 132 parts), a 2-D 5-point grid of 1 M rows took 0.9 s,
// a 3-D 27-point stencil of 1 M rows (26.5 M entries, 264 parts) 6.9 s, but a random graph of
// 200 K rows x 10 entries 11 s and of 500 K rows x 10 entries 84 s; and on a random graph every
// part's x slice is useless (almost every entry goes to ER). Neither the size nor the locality
// of the given order tells these apart (a mesh randomly renumbered is still a mesh, and METIS
// recovers it), so the hook measures the graph itself: how much the neighbourhoods of sampled
// rows overlap within three hops.

#include <cstdint>
#include <optional>
#include <tuple>

#include "core/csr_matrix.hpp"
#include "core/field_set.hpp"
#include "core/matrix_features.hpp"

namespace spmvd {

// Rows sampled (evenly spaced, so the feature is deterministic), and the most paths walked
// from one of them (bounds the hook at samples x cap steps: ~0.3 M, whatever the matrix).
inline constexpr std::int64_t kEhybGrowthSamples = 64;
inline constexpr std::int64_t kEhybGrowthPathCap = 4096;
// EHYB is offered only at or below this neighbourhood growth. Measured (2026-11-23, kernels_ehyb
// and a timing program on the build machine): 2-D 5-point grid 0.29 (randomly renumbered too),
// 7-wide band 0.07, 3-D 27-point stencil 0.035; a random pattern of 8 entries a row 0.997,
// R-MAT graphs (Graph500 parameters, 16 edges a vertex) 0.91 at scale 16 and 0.95 at 18. A
// symmetric random pattern of degree d is expected near (1 - 1/d)^2 (walks that step back), 0.77
// at d = 8. 0.5 sits between the two groups.
inline constexpr double kEhybMaxNeighbourhoodGrowth = 0.5;

struct CudaEhybFeatures {
  // Mean over the sampled rows that have an off-diagonal entry of (distinct rows reached by
  // walks of 1 to 3 steps along off-diagonal entries) / (walks taken), walks in breadth-first
  // order up to kEhybGrowthPathCap. ~1 where neighbourhoods do not overlap (random graphs,
  // expanders); small where they do (meshes, bands, stencils: the graphs METIS cuts well).
  // 0 when no sampled row has an off-diagonal entry.
  double neighbourhood_growth = 0.0;
  static constexpr auto kFields =
      std::tuple{declare_field("neighbourhood_growth", &CudaEhybFeatures::neighbourhood_growth)};
  friend bool operator==(const CudaEhybFeatures&, const CudaEhybFeatures&) = default;
};

// O(kEhybGrowthSamples x kEhybGrowthPathCap x log) at most; needs a square matrix (returns 0
// otherwise: EHYB is not offered there anyway).
CudaEhybFeatures compute_cuda_ehyb_features(const CsrMatrix<double>& matrix);
// nullopt where the hook did not run (calibration samples); throws Error(invalid_argument) when
// the entry does not decode.
std::optional<CudaEhybFeatures> cuda_ehyb_features(const MatrixFeatures& features);

}  // namespace spmvd
