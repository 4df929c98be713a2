#include <memory>
#include <utility>

#include "core/error.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/cpu_rows.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CpuCsrOperator final : public SpmvOperator {
 public:
  explicit CpuCsrOperator(std::shared_ptr<const DeviceCsrArrays> csr)
      : rows_(csr->rows), csr_(std::move(csr)) {}

  void apply(const void* x_raw, void* y_raw, double alpha_in, double beta_in) override {
    const auto* offsets = csr_->row_offsets.as<const RowOffset>();
    const auto* cols = csr_->col_indices.as<const ColIndex>();
    const auto* values = csr_->values.as<const Value>();
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    const auto alpha = static_cast<Value>(alpha_in);
    const auto beta = static_cast<Value>(beta_in);
    cpu_detail::for_row_ranges(rows_, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) {
        Value sum = 0;
        for (RowOffset k = offsets[r]; k < offsets[r + 1]; ++k) sum += values[k] * x[cols[k]];
        cpu_detail::store_axpby(y[r], alpha, sum, beta);
      }
    });
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override { return csr_->bytes(); }

 private:
  std::int64_t rows_;
  std::shared_ptr<const DeviceCsrArrays> csr_;  // the source's, shared
};

}  // namespace

std::unique_ptr<SpmvOperator> CpuCsrRules::build(const BuildSource& source, Precision precision,
                                                 const Candidate& candidate) {
  check_candidate_format("cpu_csr", kCpuCsrFormatId, candidate);
  check_cpu_device("cpu_csr", source.device());
  if (precision == Precision::fp32)
    return std::make_unique<CpuCsrOperator<float>>(source.device_csr(precision));
  return std::make_unique<CpuCsrOperator<double>>(source.device_csr(precision));
}

}  // namespace spmvd
