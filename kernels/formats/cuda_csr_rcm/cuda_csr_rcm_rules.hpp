#pragma once
// CSR vector on the RCM-renumbered matrix (issue 16, "Reordering as a plan property"). A
// matrix whose numbering scatters neighbours (a mesh or graph renumbered at random, copies of a
// matrix interleaved) gathers every x value from a sector of its own: on an H100 the renumbered
// delaunay_n16-x48 took 0.257 ms in cuda_csr_vector where the same structure in its own order
// took 0.120 (fp64, 2026-11-25, docs/data/2026-11-25-h100-suite-all-formats-v31.json.gz), and
// cuSPARSE ALG1 0.221 against 0.143. RCM (partition/rcm_order.hpp) renumbers rows and columns
// alike, so P A P^T is banded again and its gathers local; the caller never sees the order:
//   apply(): x_perm[i] = x[order[i]] (a gather kernel), cuda_csr_vector's kernel on P A P^T
//   from x_perm into y_perm, then y[j] = y_perm[inverse[j]] (+ beta y[j]) (a second gather).
// y is gathered back rather than written through the order by the kernel: each row's value
// written to a sector of its own, while P A P^T streams through L2, made the H100 write partial
// sectors back one by one (the renumbered delaunay_n16-x48 at 0.32 ms in fp64, where the
// kernel alone takes ~0.12; 2026-11-25).
// The order is the plan's partition of kind "rcm" (cuda_bro_ell's RCM layouts use the same one:
// one RCM per matrix, shared through the BuildSource, stored with the plan).
//
// Offered where a thorough feature pass sized RCM for the matrix (cuda_bro_ell's features:
// rcm_sized and rcm_sectors_per_nonzero, computed once per matrix for both formats; the pass
// computes RCM only where it may pay, bro_rcm_may_pay) and where the renumbered gathers save
// more bytes than the permutation adds (csr_rcm_moves_fewer_bytes).
//
// Predicted as its three launches (kernels/format_parts.hpp): each gather as the SpMV of its
// permutation matrix (one entry a row at random columns) run by cuda_csr_scalar, which moves
// the same indices and random sectors plus the values a gather does not read; and the CSR
// vector kernel on P A P^T, i.e. the matrix's own features at RCM's x sectors per non-zero.

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/build_source.hpp"
#include "kernels/format_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCudaCsrRcmFormatId{21};

// Does the RCM order move fewer bytes than the caller's for CSR vector? Caller's order: nnz *
// x_sectors_per_nonzero * 32 bytes of x sectors. RCM's: nnz * rcm_sectors_per_nonzero * 32,
// plus the permutation's own traffic a multiply, rows * (4 + 32 + 8) for each of the two
// gathers (an index, a random sector, a coalesced write). False where RCM was not sized or
// the matrix is not square.
bool csr_rcm_moves_fewer_bytes(const MatrixFeatures& features);

// The host half of a build of source.host() (square): the RCM order (cuda_bro_ell's
// bro_ell_rcm_partition: the source's partition of kind "rcm", a stored plan's or an earlier
// build's, else rcm_order's) and P A P^T (permute_symmetric, oneTBB), timed and logged. Host
// memory only: the builder runs it without the device lock.
struct RcmRenumbered {
  std::shared_ptr<const PlanPartition> order;
  std::vector<std::int32_t> inverse;  // inverse[order[i]] = i
  CsrMatrix<double> matrix;           // P A P^T
};
RcmRenumbered rcm_renumbered(const BuildSource& source);

class CudaCsrRcmRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCudaCsrRcmFormatId; }
  std::string_view name() const noexcept override { return "cuda_csr_rcm"; }
  bool needs_gpu() const noexcept override { return true; }
  // Predicted through parts(); the bytes family only names the fallback of a composed format.
  std::string_view model_family() const noexcept override { return "bytes"; }

  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // cuda_csr_vector's launches (its pruned lanes, every block size) where
  // csr_rcm_moves_fewer_bytes; none otherwise.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // The renumbered CSR ((rows + 1) 64-bit offsets, nnz indices and values), the order and its
  // inverse (4 bytes a row each), x_perm and y_perm (a value a row each).
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // RCM's x sectors per non-zero (cuda_bro_ell's rcm_sectors_per_nonzero).
  double gather_sectors_per_nonzero(const MatrixFeatures& features,
                                    const Candidate& candidate) const override;
  // x's gather, the CSR vector kernel on P A P^T, y's gather (see the top of this header).
  std::vector<FormatPart> parts(const MatrixFeatures& features,
                                const Candidate& candidate) const override;

  // Builds cuda_csr_rcm on source.device(), a CUDA device: rcm_renumbered's order, inverse and
  // P A P^T, uploaded once per precision for every launch of this matrix (the source's shared
  // layout). The operator's partition() is the order, which the plan carries.
  // Throws Error(invalid_argument) for another format's candidate, a threads_per_row or
  // block_size that is not a compiled variant of cuda_csr_vector, grid_size 0 or a matrix that
  // is not square; Error(failed_precondition) on a CPU device; Error(resource_exhausted) when
  // device memory runs out.
  static std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                             const Candidate& candidate);
};

}  // namespace spmvd
