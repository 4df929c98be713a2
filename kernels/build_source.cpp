#include "kernels/build_source.hpp"

#include <spdlog/spdlog.h>

#include <vector>

namespace spmvd {
namespace {

std::size_t slot_of(Precision precision) noexcept { return precision == Precision::fp32 ? 0 : 1; }

}  // namespace

std::shared_ptr<const DeviceCsrArrays> upload_csr(Device& device, const CsrMatrix<double>& matrix,
                                                  Precision precision) {
  auto csr = std::make_shared<DeviceCsrArrays>();
  csr->rows = matrix.rows;
  csr->cols = matrix.cols;
  csr->nnz = matrix.nnz();
  csr->precision = precision;
  csr->row_offsets = upload(device, matrix.row_offsets.data(), matrix.row_offsets.size());
  csr->col_indices = upload(device, matrix.col_indices.data(), matrix.col_indices.size());
  if (precision == Precision::fp32) {
    const std::vector<float> converted(matrix.values.begin(), matrix.values.end());
    csr->values = upload(device, converted.data(), converted.size());
  } else {
    csr->values = upload(device, matrix.values.data(), matrix.values.size());
  }
  return csr;
}

std::shared_ptr<const DeviceCsrArrays> BuildSource::device_csr(Precision precision) const {
  const std::lock_guard lock(mutex_);
  std::shared_ptr<const DeviceCsrArrays>& csr = csr_[slot_of(precision)];
  if (!csr) csr = upload_csr(device_, host_, precision);
  return csr;
}

void BuildSource::offer_partition(std::shared_ptr<const PlanPartition> stored) const {
  if (!stored) return;
  const std::lock_guard lock(mutex_);
  partitions_[stored->kind] = std::move(stored);
}

std::shared_ptr<const PlanPartition> BuildSource::partition(
    const std::string& kind, const std::function<std::string(const PlanPartition&)>& problem,
    const std::function<std::vector<std::int32_t>()>& compute) const {
  std::shared_ptr<const PlanPartition> held;
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = partitions_.find(kind); it != partitions_.end()) held = it->second;
  }
  if (held) {
    const std::string reason = problem(*held);
    if (reason.empty()) return held;
    spdlog::warn(
        "build source: the held partition '{}' of this {} x {} matrix is not used ({}); "
        "computing it again",
        kind, host_.rows, host_.cols, reason);
  }
  auto computed = std::make_shared<const PlanPartition>(PlanPartition{kind, compute()});
  const std::lock_guard lock(mutex_);
  partitions_[kind] = computed;
  return computed;
}

bool BuildSource::has_device_csr(Precision precision) const {
  const std::lock_guard lock(mutex_);
  return csr_[slot_of(precision)] != nullptr;
}

}  // namespace spmvd
