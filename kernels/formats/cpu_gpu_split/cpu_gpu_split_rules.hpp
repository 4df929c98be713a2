#pragma once
// Paper 003's CPU-GPU split (Yang, Li, Li, JPDC 2017): with a threshold K, the first K
// non-zeros of every row form an ELL part of width K on the GPU (column-major, as cuda_ell), the
// rest a COO part on the host, multiplied with oneTBB; both run at once and the host's partial
// rows of y are added on the GPU (Sec. 4.3 Algorithm 1, Sec. 4.4 Algorithm 2). K is chosen
// where the predicted GPU and host times balance (Sec. 5 Eqs. 6-8, Algorithm 3), with this
// GPU's calibrated ELL model and this host's calibrated COO rate and bus bandwidth
// (candidates_chosen_by), or from the DF alone without a calibration (candidates).
//
// Only the GPU part lives in device memory: device_bytes and admissible count it alone, so the
// split is offered for a matrix whose CSR would not fit the device's budget (paper 000/003's
// motivation): the host part stays in host memory. The paper's DIA variant for the GPU part of
// quasi-diagonal matrices (Algorithm 1 line 7) is not built.

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kernels/format_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"

namespace spmvd {

inline constexpr FormatId kCpuGpuSplitFormatId{16};

// The GPU part's kernel is cuda_ell's: its block sizes, one wave of resident blocks.
inline constexpr const std::array<std::uint32_t, 3>& kCpuGpuSplitBlockSizes = kEllBlockSizes;

// cpu_gpu_split's parameters (Candidate::params holds FieldSet::of(them)).
struct CpuGpuSplitParams {
  std::uint32_t ell_width = 0;  // K: entries per row on the GPU, 1 <= K < the longest row
  static constexpr auto kFields =
      std::tuple{declare_field("ell_width", &CpuGpuSplitParams::ell_width)};
  friend bool operator==(const CpuGpuSplitParams&, const CpuGpuSplitParams&) = default;
};

class CpuGpuSplitRules final : public FormatRules {
 public:
  FormatId id() const noexcept override { return kCpuGpuSplitFormatId; }
  std::string_view name() const noexcept override { return "cpu_gpu_split"; }
  bool needs_gpu() const noexcept override { return true; }
  // Predicted as its parts (parts()); "bytes" is the fallback name a composed format gives.
  std::string_view model_family() const noexcept override { return "bytes"; }

  // On a GPU, for a matrix with a row of >= 2 non-zeros (so some K leaves the host a non-empty
  // COO part: with none, the split is cuda_ell plus two idle copies), rows < 2^31, and the
  // smallest GPU part (K = 1) within the budget. The host part is not counted: it lives in
  // host memory.
  bool admissible(const MatrixFeatures& features, const DeviceInfo& device, Precision precision,
                  std::uint64_t memory_budget_bytes) const override;
  // Without models (no calibration): K from the DF by HYB's rule (paper 003 Sec. 4.2: the
  // rows of nearly equal length in ELL, the few longer rows' excess in COO; cuda_hyb's
  // ell_widths: Bell-Garland's K, round(mean), ceil(mean + stddev)), each clamped to
  // [1, longest row - 1], times kCpuGpuSplitBlockSizes. Eqs. 6-7 need the host's rate, which
  // DeviceInfo (the GPU's) does not carry, so the measurement chooses among these. Plus K = 1
  // at block 256, the smallest GPU part, so that a budget too small for the others (a matrix
  // larger than the device's memory) still holds one.
  std::vector<Candidate> candidates(const MatrixFeatures& features,
                                    const DeviceInfo& device) const override;
  // The GPU part only: rows * K slots of (32-bit column index + value), and, per row the host
  // part touches, its 32-bit row index and one value (the partial y the host sends back). The
  // host part's COO and its pinned x and y buffers are host memory.
  std::uint64_t device_bytes(const MatrixFeatures& features, Precision precision,
                             const Candidate& candidate) const override;
  // Structural: the parameters decode, 1 <= K < longest row, and the launch is one of the
  // one-wave launches for this matrix on this device (K chosen by the models need not be one
  // of candidates()).
  bool is_valid(const Candidate& candidate, const MatrixFeatures& features,
                const DeviceInfo& device) const override;

  // The GPU part: every row cut to K entries, run as cuda_ell of width K with the candidate's
  // launch (empty rows included: the ELL kernel writes beta*y there). The host part: the
  // remainder of the rows longer than K, run as cpu_coo, moving x (cols values) to the host and
  // its rows of y (one value each) back.
  std::vector<FormatPart> parts(const MatrixFeatures& features,
                                const Candidate& candidate) const override;
  // Algorithm 3 with calibrated costs: per block size, the K in [1, longest row - 1] with the
  // least max(T_gpu, T_host) (partition/cpu_gpu_threshold.hpp balanced_cpu_gpu_threshold), both
  // times from `predictor` on parts(); none where a part cannot be predicted. Plus K = 1 at
  // block 256 (as in candidates()): the predictions do not see the memory budget.
  std::vector<Candidate> candidates_chosen_by(const PartTimePredictor& predictor,
                                              const MatrixFeatures& features,
                                              const DeviceInfo& device) const override;

  // The candidate at threshold K with block size `block_size` (one wave of resident blocks).
  static Candidate candidate_for(std::int64_t ell_width, std::uint32_t block_size,
                                 std::int64_t rows, const DeviceInfo& device);

  // Builds cpu_gpu_split on a CUDA device (cpu_gpu_split_operator.cu): the ELL part and the
  // touched rows on the device, the COO part and pinned x / partial-y buffers on the host, a
  // second stream for the host part's copies. apply() is asynchronous on the device's stream
  // (the host part runs as a host function on the second stream, ordered by events).
  // Throws Error(invalid_argument) for a candidate of another format, a block size not in
  // kCpuGpuSplitBlockSizes, grid_size 0, or K outside [1, longest row - 1];
  // Error(failed_precondition) on a CPU device; Error(resource_exhausted) when memory runs out.
  static std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                             const Candidate& candidate, Device& device);

  // The candidate's CpuGpuSplitParams; throws Error(invalid_argument) naming the field a stored
  // plan lacks.
  static CpuGpuSplitParams params_of(const Candidate& candidate) {
    return candidate.params.as<CpuGpuSplitParams>("cpu_gpu_split");
  }
};

}  // namespace spmvd
