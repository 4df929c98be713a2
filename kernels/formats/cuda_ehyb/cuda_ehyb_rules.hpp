#pragma once
// EHYB, explicit caching HYB (Chen, paper 002): the square matrix's graph cut by METIS into
// parts whose x slices fit one block's shared memory (Eqs. 1-2), rows reordered by part and by
// length (ehyb_layout.hpp), a sliced ELL part whose x comes from the part's slice cached in
// shared memory with 16-bit local column indices, and an extra-rows (ER) part for the entries
// whose column lies in another part. The permutation stays inside the operator, so apply() takes
// and returns the caller's vectors: the cached kernel gathers its x slice through it, the ER
// kernel reads x in the caller's order, and both write y in the new row order (coalesced stores),
// which a third launch gathers back into the caller's order. Stored through the permutation, a
// y sector's rows would arrive at different times (a part's rows are sorted by length) and go
// back to DRAM part-filled (docs/BENCHMARKS.md "EHYB and the caller's row order").
//
// Variants (CudaEhybParams::variant):
//  - paper: Alg. 3. One block per part: the block loads its x slice into shared memory, then
//    its warps take the part's slices one at a time from a shared counter (the paper's
//    balancing, Sec. 4.2). The ER part follows in a second launch (see cuda_ehyb_operator.cu).
//  - async_copy (Hopper): one persistent block per SM, each walking parts blockIdx,
//    blockIdx + grid, ...; the next part's x slice is gathered with cp.async (sm_80+) into a
//    second shared buffer while the warps compute the current part, so the slice load is off
//    the critical path. Two buffers halve the cache a part may use.

#include <array>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_features.hpp"

namespace spmvd {

inline constexpr FormatId kCudaEhybFormatId{20};

enum class EhybVariant : std::uint32_t { paper = 0, async_copy = 1 };
inline constexpr std::array<std::uint32_t, 2> kEhybVariants{
    static_cast<std::uint32_t>(EhybVariant::paper),
    static_cast<std::uint32_t>(EhybVariant::async_copy)};

// cuda_ehyb's parameters (Candidate::params holds FieldSet::of(them)). The x-cache size
// follows from the partition count and the structure: the largest part's rows.
struct CudaEhybParams {
  std::uint32_t partitions = 0;  // P x K of Eq. 1 (or twice that: the candidates say)
  std::uint32_t variant = 0;     // EhybVariant
  static constexpr auto kFields =
      std::tuple{declare_field("partitions", &CudaEhybParams::partitions),
                 declare_field("variant", &CudaEhybParams::variant)};
  friend bool operator==(const CudaEhybParams&, const CudaEhybParams&) = default;
};

// A part must hold at least two slices of 32 rows: below that the block's x slice holds too few
// columns for a row's neighbours to fall inside it (most entries would go to ER), and the
// block-per-part launch is mostly idle warps. Matrices with fewer rows than P x 64 get fewer
// parts than Eq. 1 (the GPU is not filled by them anyway); below 64 rows EHYB is not offered.
inline constexpr std::int64_t kEhybMinRowsPerPartition = 64;
// Parts are sized for 10 % above rows / parts, so the largest part METIS returns (its k-way
// tolerance is 3 %, kEhybMetisUfactor, which small parts can exceed by a row or two) still fits
// the cache that Eq. 1 computed for the mean.
inline constexpr double kEhybPlannedImbalance = 1.10;
// METIS's k-way cut of the symmetrised graph is the preprocessing's cost (the paper: 400-1500
// SpMVs with 16 threads, Sec. 6). Measured single-threaded on this project's 2-core build
// machine (2026-11-23, /tmp timing programs over partition_matrix_graph; up to 2x slower while
// other builds share the cores): 0.16-0.26 s per million entries on meshes (2-D 5-point grid
// of 1 M rows: 0.9 s; 3-D 27-point stencil of 1 M rows and 26.5 M entries, 264 parts: 6.9 s). At
// 2^25 entries (33.5 M) that is about 9 s a build, the most a plan that is then cached should cost
// (each of the up to three candidates builds it); beyond it EHYB is not offered. Graphs on which
// METIS is far slower per entry (random, expanders) are kept out by the neighbourhood growth
// (cuda_ehyb_features.hpp), not by this bound.
inline constexpr std::int64_t kEhybMaxNonzeros = std::int64_t{1} << 25;
// CUDA keeps 1 KB of an SM's shared memory per resident block (sm_80+): Hopper's 228 KB per SM
// leave 227 KB to one block with the opt-in attribute
// (cudaFuncAttributeMaxDynamicSharedMemorySize).
inline constexpr std::uint64_t kEhybReservedSharedBytesPerBlock = 1024;
// The kernels' static shared memory (the slice counter), rounded up.
inline constexpr std::uint64_t kEhybStaticSharedBytes = 16;
// fp64 sizes every candidate, so one plan serves both precisions (an fp32 plan then has twice
// Eq. 1's parts only on matrices of more than P x 29056 rows).
inline constexpr std::uint64_t kEhybSizingValueBytes = 8;

class CudaEhybRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaEhybFormatId; }
  std::string_view name() const noexcept override { return "cuda_ehyb"; }
  bool needs_gpu() const noexcept override { return true; }
  // No dedicated model: the bytes model at EHYB's own arrays (device_bytes), fitted on its own
  // samples by the format_bytes stage like every bytes-family format.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // offered(features, device) and the smallest candidate within the budget.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // Where offered: the paper variant at Eq. 1's partition count and at twice it (smaller caches,
  // two blocks per SM), the async_copy variant at twice it (Eq. 1's on matrices too small for
  // twice) where its two buffers fit a block.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // An upper bound on the arrays build() allocates, since the split between the cached part and
  // ER is known only after METIS. Per part the cached slots are at most its cached entries + 32
  // x its longest row (rows sorted descending: each slice after the first is no wider than any
  // row of the full slice before it); ER's at most its entries + 32 x the longest row. Values
  // for all those slots; indices at 2 bytes (cached) or 4 (ER), bounded by the worst split (every
  // entry in ER, 4 bytes); 64-bit slice offsets, 32-bit permutation, ER row map and part tables;
  // y in the new order and the 32-bit map the gather brings it back through.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // CudaEhybFeatures (cuda_ehyb_features.hpp).
  std::optional<FieldSet> own_features(const CsrMatrix<double>& matrix,
                                       const MatrixFeatures& common) const override;

  // Square, 64 <= rows < 2^31, 0 < nnz <= kEhybMaxNonzeros, its own features computed with a
  // neighbourhood growth <= kEhybMaxNeighbourhoodGrowth, on a GPU with SMs and shared memory.
  // Without its features (calibration samples) nothing bounds METIS's cost: not offered, and
  // the format is then predicted by the shared bytes fit (MODELS.md).
  static bool offered(const MatrixFeatures& features, const DeviceInfo& device);
  // Bytes of shared memory one block may use for its x cache (opt-in maximum less the static).
  static std::uint64_t cache_bytes_per_block(const DeviceInfo& device);
  // x values a block can cache with `buffers` buffers of `value_bytes` values: at most
  // kEhybMaxCacheEntries (16-bit local indices).
  static std::int64_t cache_capacity(const DeviceInfo& device, std::uint64_t value_bytes,
                                     std::int64_t buffers);
  // Eq. 1: P x K with P = SMs and K the least integer whose planned part
  // (ceil(rows x kEhybPlannedImbalance / (P x K))) fits cache_capacity; then at most
  // rows / kEhybMinRowsPerPartition, at least 1. Eq. 2's VecSize is planned_cache_entries.
  static std::int32_t eq1_partitions(std::int64_t rows, const DeviceInfo& device,
                                     std::uint64_t value_bytes);
  static std::int64_t planned_cache_entries(std::int64_t rows, std::int64_t partitions);
  // Threads per block: enough warps for the planned part's slices, 64 to 1024, a power of two.
  static std::uint32_t block_size_for(std::int64_t rows, std::int64_t partitions);
  // The grid: one block per part (paper), or one persistent block per SM, at most one per part
  // (async_copy: a block walks parts blockIdx.x, + grid, ...).
  static std::uint32_t grid_size_for(std::int64_t partitions, EhybVariant variant,
                                     const DeviceInfo& device);

  // Builds cuda_ehyb on source.device(), a CUDA device: METIS (or the partition the source
  // holds: a stored plan's, an earlier candidate's; ehyb_layout.hpp ehyb_partition), the
  // reordering and both parts on the host (timed and logged), copied once; the operator's
  // partition() is the part of every row, which the plan carries. apply() runs the cached
  // kernel then the ER kernel on the device stream. Throws Error(invalid_argument) for a candidate
  // of another format, an unknown variant, partitions outside [1, rows / kEhybMinRowsPerPartition]
  // (or 1), block size not a multiple of 32 in [64, 1024], grid_size 0, or a non-square matrix;
  // Error(failed_precondition) on a CPU device; Error(resource_exhausted) when the largest part's x
  // slice exceeds the block's shared memory on this device, or device memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
  // A host algorithm (METIS) all the same: the tuner's build cost (format_registry.hpp).
  static constexpr bool kBuildsOnHost = true;

  // The candidate's CudaEhybParams; throws Error(invalid_argument) naming the field a stored plan
  // lacks.
  static CudaEhybParams params_of(const Candidate& candidate) {
    return candidate.params.as<CudaEhybParams>("cuda_ehyb");
  }
  // Throws Error(invalid_argument) naming the bad field for a variant not in kEhybVariants or
  // partitions outside [1, max(1, rows / kEhybMinRowsPerPartition)].
  static void check_params(const CudaEhybParams& params, std::int64_t rows);
};

}  // namespace spmvd
