#include "kernels/formats/cpu_csr/cpu_csr_operator.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"

namespace spmvd {
namespace {

template <typename Value>
class CpuCsrOperator final : public SpmvOperator {
 public:
  // Values are converted to Value (fp64 -> fp32 rounds to nearest) on the way in.
  CpuCsrOperator(const CsrMatrix<double>& m, Device& device)
      : rows_(m.rows),
        row_offsets_(upload(device, m.row_offsets.data(), m.row_offsets.size())),
        col_indices_(upload(device, m.col_indices.data(), m.col_indices.size())) {
    const std::vector<Value> values(m.values.begin(), m.values.end());
    values_ = upload(device, values.data(), values.size());
  }

  void apply(const void* x_raw, void* y_raw, double alpha_in, double beta_in) override {
    const auto* offsets = row_offsets_.as<const RowOffset>();
    const auto* cols = col_indices_.as<const ColIndex>();
    const auto* values = values_.as<const Value>();
    const auto* x = static_cast<const Value*>(x_raw);
    auto* y = static_cast<Value*>(y_raw);
    const auto alpha = static_cast<Value>(alpha_in);
    const auto beta = static_cast<Value>(beta_in);
    // Grain of 256 rows: small enough that TBB's work stealing evens out rows of very
    // different lengths, large enough that scheduling stays a small share of the work.
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows_, 256),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
                        for (std::int64_t r = range.begin(); r < range.end(); ++r) {
                          Value sum = 0;
                          for (RowOffset k = offsets[r]; k < offsets[r + 1]; ++k)
                            sum += values[k] * x[cols[k]];
                          // beta == 0: y is write-only (SpmvOperator contract), NaN must not leak.
                          y[r] = beta == Value(0) ? alpha * sum : alpha * sum + beta * y[r];
                        }
                      });
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    return row_offsets_.bytes() + col_indices_.bytes() + values_.bytes();
  }

 private:
  std::int64_t rows_;
  DeviceBuffer row_offsets_;
  DeviceBuffer col_indices_;
  DeviceBuffer values_;
};

}  // namespace

std::unique_ptr<SpmvOperator> build_cpu_csr(const CsrMatrix<double>& matrix, Precision precision,
                                            const Candidate& candidate, Device& device) {
  check_candidate_format("cpu_csr", kCpuCsrFormatId, candidate);
  check_cpu_device("cpu_csr", device);
  if (precision == Precision::fp32) return std::make_unique<CpuCsrOperator<float>>(matrix, device);
  return std::make_unique<CpuCsrOperator<double>>(matrix, device);
}

}  // namespace spmvd
