
#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/coo_layout.hpp"
#include "kernels/formats/common/cpu_rows.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CpuCooOperator final : public SpmvOperator {
 public:
  CpuCooOperator(const CsrMatrix<double>& m, Device& device) : rows_(m.rows), nnz_(m.nnz()) {
    const CooLayout<Value> coo = make_coo_layout<Value>(m);
    row_indices_ = upload(device, coo.row_indices.data(), coo.row_indices.size());
    col_indices_ = upload(device, coo.col_indices.data(), coo.col_indices.size());
    values_ = upload(device, coo.values.data(), coo.values.size());
  }

  void apply(const void* x_raw, void* y_raw, double alpha_in, double beta_in) override {
    const auto* row_indices = row_indices_.as<const std::int32_t>();
    const auto* cols = col_indices_.as<const ColIndex>();
    const auto* values = values_.as<const Value>();
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    const auto alpha = static_cast<Value>(alpha_in);
    const auto beta = static_cast<Value>(beta_in);
    const std::int32_t* rows_end = row_indices + nnz_;
    cpu_detail::for_row_ranges(rows_, [&](std::int64_t begin, std::int64_t end) {
      // The task's entries: rows are sorted, so they are one contiguous run.
      std::int64_t k = std::lower_bound(row_indices, rows_end, begin) - row_indices;
      for (std::int64_t r = begin; r < end; ++r) {
        Value sum = 0;
        for (; k < nnz_ && row_indices[k] == r; ++k) sum += values[k] * x[cols[k]];
        cpu_detail::store_axpby(y[r], alpha, sum, beta);
      }
    });
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return row_indices_.bytes() + col_indices_.bytes() + values_.bytes();
  }

 private:
  std::int64_t rows_;
  std::int64_t nnz_;
  DeviceBuffer row_indices_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CpuCooRules::build(const CsrMatrix<double>& matrix, Precision precision,
                                            const Candidate& candidate, Device& device) {
  check_candidate_format("cpu_coo", kCpuCooFormatId, candidate);
  check_cpu_device("cpu_coo", device);
  if (precision == Precision::fp32) return std::make_unique<CpuCooOperator<float>>(matrix, device);
  return std::make_unique<CpuCooOperator<double>>(matrix, device);
}

}  // namespace spmvd
