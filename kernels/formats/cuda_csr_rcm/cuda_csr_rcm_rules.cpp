#include "kernels/formats/cuda_csr_rcm/cuda_csr_rcm_rules.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <spdlog/spdlog.h>

#include "core/csr_matrix.hpp"
#include "core/error.hpp"
#include "core/part_features.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "partition/symmetric_permutation.hpp"

namespace spmvd {
namespace {

constexpr double kSectorBytes = kXSectorColumns * sizeof(float);
// The gather's block size (kernels/formats/common/gather_device.cuh launches 256 threads).
constexpr std::uint32_t kGatherBlockSize = 256;

// RCM's sizes where a thorough pass computed them for this square matrix, else nullopt.
std::optional<BroEllFeatures> rcm_sizes(const MatrixFeatures& features) {
  if (features.rows != features.cols || features.rows <= 0) return std::nullopt;
  std::optional<BroEllFeatures> own = cuda_bro_ell_features(features);
  if (!own || !own->rcm_sized) return std::nullopt;
  return own;
}

// The permutation's own traffic a multiply (csr_rcm_moves_fewer_bytes): each of the two
// gathers reads an index and a random sector and writes a value a row.
double permutation_bytes(std::int64_t rows) {
  return 2.0 * static_cast<double>(rows) * (sizeof(std::int32_t) + kSectorBytes + sizeof(double));
}

// A gather of `size` values as the SpMV of its permutation matrix: a row of one entry at a
// random column for each value, run by cuda_csr_scalar.
FormatPart gather_part(const MatrixFeatures& whole, std::int64_t size) {
  MatrixFeatures f = part_features(whole, {{1, size}});
  f.x_sectors_per_nonzero = 1.0;
  f.mean_row_span_fraction = 1.0;
  // parts() is not given the device: the csr_vector family reads rows, lanes and block size,
  // not the grid, so the part carries the grid of a device whose resident limit is unknown.
  const Candidate as{.format = kCudaCsrScalarFormatId,
                     .params = {},
                     .launch = {.block_size = kGatherBlockSize,
                                .threads_per_row = 1,
                                .grid_size = CudaCsrVectorRules::grid_size(
                                    size, 1, kGatherBlockSize, DeviceInfo{})}};
  return FormatPart{.runs = FormatPart::Runs::gpu,
                    .features = std::move(f),
                    .candidate = as,
                    .transfer_values = 0};
}

}  // namespace

bool csr_rcm_moves_fewer_bytes(const MatrixFeatures& features) {
  const std::optional<BroEllFeatures> rcm = rcm_sizes(features);
  if (!rcm) return false;
  const auto nnz = static_cast<double>(features.nnz);
  const double caller_order = nnz * features.x_sectors_per_nonzero * kSectorBytes;
  const double rcm_order =
      nnz * rcm->rcm_sectors_per_nonzero * kSectorBytes + permutation_bytes(features.rows);
  return rcm_order < caller_order;
}

RcmRenumbered rcm_renumbered(const BuildSource& source) {
  const CsrMatrix<double>& m = source.host();
  RcmRenumbered out{.order = bro_ell_rcm_partition(source), .inverse = {}, .matrix = {}};
  const auto start = std::chrono::steady_clock::now();
  out.inverse = inverse_permutation("cuda_csr_rcm", out.order->entries);
  out.matrix = permute_symmetric(m, out.order->entries);
  spdlog::info(
      "cuda_csr_rcm: P A P^T of {} rows, {} nonzeros in {:.1f} ms", m.rows, m.nnz(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return out;
}

bool CudaCsrRcmRules::admissible(const MatrixFeatures& features, const DeviceInfo& device,
                                 Precision precision, std::uint64_t memory_budget_bytes) const {
  if (!device.is_gpu) return false;
  const std::vector<Candidate> space = candidates(features, device);
  return !space.empty() && device_bytes(features, precision, space.front()) <= memory_budget_bytes;
}

std::vector<Candidate> CudaCsrRcmRules::candidates(const MatrixFeatures& features,
                                                   const DeviceInfo& device) const {
  if (!csr_rcm_moves_fewer_bytes(features)) return {};
  std::vector<Candidate> out = CudaCsrVectorRules{}.candidates(features, device);
  for (Candidate& c : out) c.format = id();
  return out;
}

std::uint64_t CudaCsrRcmRules::device_bytes(const MatrixFeatures& features, Precision precision,
                                            const Candidate&) const {
  const auto rows = static_cast<std::uint64_t>(features.rows);
  const auto nnz = static_cast<std::uint64_t>(features.nnz);
  const std::uint64_t value = value_bytes(precision);
  return (rows + 1) * sizeof(RowOffset) + nnz * (sizeof(ColIndex) + value) +
         rows * 2 * (sizeof(std::int32_t) + value);
}

double CudaCsrRcmRules::gather_sectors_per_nonzero(const MatrixFeatures& features,
                                                   const Candidate&) const {
  const std::optional<BroEllFeatures> rcm = rcm_sizes(features);
  return rcm ? rcm->rcm_sectors_per_nonzero : features.x_sectors_per_nonzero;
}

std::vector<FormatPart> CudaCsrRcmRules::parts(const MatrixFeatures& features,
                                               const Candidate& candidate) const {
  const std::optional<BroEllFeatures> rcm = rcm_sizes(features);
  if (!rcm)
    throw_invalid(
        "cuda_csr_rcm: RCM was not sized for this matrix (a square matrix's thorough feature "
        "pass sizes it where it may pay: cuda_bro_ell's rcm_sized)");
  // P A P^T: the same rows, lengths and non-zeros, RCM's gathers and span.
  MatrixFeatures renumbered = features;
  renumbered.format_features.clear();
  renumbered.formats_left_out.clear();
  renumbered.x_sectors_per_nonzero = rcm->rcm_sectors_per_nonzero;
  if (features.cols > 0)
    renumbered.mean_row_span_fraction =
        std::min(features.mean_row_span_fraction,
                 static_cast<double>(2 * rcm->rcm_bandwidth + 1) / static_cast<double>(features.cols));
  Candidate kernel_as = candidate;
  kernel_as.format = kCudaCsrVectorFormatId;

  return {gather_part(features, features.cols),
          FormatPart{.runs = FormatPart::Runs::gpu,
                     .features = std::move(renumbered),
                     .candidate = std::move(kernel_as),
                     .transfer_values = 0},
          gather_part(features, features.rows)};
}

}  // namespace spmvd
