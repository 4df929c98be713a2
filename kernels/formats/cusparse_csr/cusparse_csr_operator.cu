#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/host_log.hpp"
#include "kernels/formats/common/builder_checks.hpp"
#include "kernels/formats/common/csr_derived_arrays.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

namespace spmvd {

static_assert(kCusparseSpmvCsrAlg1 == CUSPARSE_SPMV_CSR_ALG1, "cusparse_csr_rules.hpp is stale");
static_assert(kCusparseSpmvCsrAlg2 == CUSPARSE_SPMV_CSR_ALG2, "cusparse_csr_rules.hpp is stale");

namespace {

void warn_on_failure(cusparseStatus_t status, const char* call) noexcept {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  try {
    cuda_detail::log_warning(std::string("cusparse_csr: ") + call +
                             " failed: " + cusparseGetErrorName(status));
  } catch (...) {
    // Building the message can throw (std::bad_alloc); a destructor must not.
  }
}

struct HandleDeleter {
  void operator()(cusparseHandle_t h) const noexcept {
    warn_on_failure(cusparseDestroy(h), "cusparseDestroy");
  }
};
struct SpMatDeleter {
  void operator()(cusparseSpMatDescr_t d) const noexcept {
    warn_on_failure(cusparseDestroySpMat(d), "cusparseDestroySpMat");
  }
};
struct DnVecDeleter {
  void operator()(cusparseConstDnVecDescr_t d) const noexcept {
    warn_on_failure(cusparseDestroyDnVec(d), "cusparseDestroyDnVec");
  }
};
using HandlePtr = std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, HandleDeleter>;
using SpMatPtr = std::unique_ptr<std::remove_pointer_t<cusparseSpMatDescr_t>, SpMatDeleter>;
using ConstDnVecPtr =
    std::unique_ptr<std::remove_pointer_t<cusparseConstDnVecDescr_t>, DnVecDeleter>;
using DnVecPtr = std::unique_ptr<std::remove_pointer_t<cusparseDnVecDescr_t>, DnVecDeleter>;

template <typename Value>
constexpr cudaDataType value_type() {
  return std::is_same_v<Value, float> ? CUDA_R_32F : CUDA_R_64F;
}

// y = beta*y for matrices cuSPARSE is not given (no columns or no entries).
template <typename Value>
__global__ void scale_kernel(std::int64_t rows, Value* __restrict__ y, Value beta) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride)
    y[i] = beta == Value(0) ? Value(0) : beta * y[i];
}

template <typename Value>
class CusparseCsrOperator final : public SpmvOperator {
 public:
  // cuSPARSE wants one index type for offsets and columns. While nnz fits 32 bits: the
  // source's int64 offsets narrowed on the device (shared by ALG1 and ALG2) with its own
  // columns and values; otherwise its offsets and values with its columns widened on the device.
  CusparseCsrOperator(const BuildSource& source, cusparseSpMVAlg_t algorithm)
      : rows_(source.host().rows),
        cols_(source.host().cols),
        nnz_(source.host().nnz()),
        algorithm_(algorithm),
        stream_(static_cast<cudaStream_t>(source.device().native_stream())),
        csr_(source.device_csr(precision_of<Value>())) {
    Device& device = source.device();
    void* values = csr_->values.data();
    void* row_offsets = nullptr;
    void* col_indices = nullptr;
    cusparseIndexType_t index_type = CUSPARSE_INDEX_32I;
    if (CusparseCsrRules::index_bytes(nnz_) == 4) {
      converted_ = shared_row_offsets32(source, *csr_);
      row_offsets = converted_->data();
      col_indices = csr_->col_indices.data();
    } else {
      index_type = CUSPARSE_INDEX_64I;
      converted_ = shared_col_indices64(source, *csr_);
      row_offsets = csr_->row_offsets.data();
      col_indices = converted_->data();
    }
    // cuSPARSE is not handed shapes without work (no rows, columns or entries): there
    // y = beta*y is all there is, done by scale_kernel.
    if (rows_ == 0 || cols_ == 0 || nnz_ == 0) return;

    cusparseHandle_t handle = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreate(&handle));
    handle_.reset(handle);
    SPMVD_CUSPARSE_CHECK(cusparseSetStream(handle, stream_));
    cusparseSpMatDescr_t matrix = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateCsr(&matrix, rows_, cols_, nnz_, row_offsets, col_indices,
                                           values, index_type, index_type, CUSPARSE_INDEX_BASE_ZERO,
                                           value_type<Value>()));
    matrix_.reset(matrix);

    // Workspace sizing and preprocessing need vector descriptors with real storage; these
    // scratch vectors live only for the build.
    const DeviceBuffer x(device, static_cast<std::size_t>(cols_) * sizeof(Value));
    const DeviceBuffer y(device, static_cast<std::size_t>(rows_) * sizeof(Value));
    const ConstDnVecPtr x_descr = make_x(x.data());
    const DnVecPtr y_descr = make_y(y.data());
    const Value one = 1, zero = 0;
    std::size_t workspace_bytes = 0;
    SPMVD_CUSPARSE_CHECK(cusparseSpMV_bufferSize(
        handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, x_descr.get(), &zero, y_descr.get(),
        value_type<Value>(), algorithm_, &workspace_bytes));
    workspace_ = DeviceBuffer(device, workspace_bytes);
    // Once per matrix: the analysis it stores in the workspace pays off over repeated
    // multiplies with the same descriptor, algorithm and workspace.
    SPMVD_CUSPARSE_CHECK(cusparseSpMV_preprocess(
        handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix, x_descr.get(), &zero, y_descr.get(),
        value_type<Value>(), algorithm_, workspace_.data()));
    device.synchronize();  // surface preprocessing faults here, not in the first apply()
  }

  void apply(const void* x, void* y, double alpha_in, double beta_in) override {
    if (rows_ == 0) return;
    const auto alpha = static_cast<Value>(alpha_in);
    const auto beta = static_cast<Value>(beta_in);
    if (!matrix_) {
      // Grid-stride loop: 4096 blocks of 256 already cover a million rows per sweep, and this
      // path only runs for matrices without entries.
      const unsigned blocks =
          static_cast<unsigned>(std::min<std::int64_t>((rows_ + 255) / 256, 4096));
      scale_kernel<Value><<<blocks, 256, 0, stream_>>>(rows_, static_cast<Value*>(y), beta);
      SPMVD_CUDA_CHECK_LAUNCH();
      return;
    }
    // Vector descriptors are host-side structs: creating them per call costs no device work.
    const ConstDnVecPtr x_descr = make_x(x);
    const DnVecPtr y_descr = make_y(y);
    SPMVD_CUSPARSE_CHECK(cusparseSpMV(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                      matrix_.get(), x_descr.get(), &beta, y_descr.get(),
                                      value_type<Value>(), algorithm_, workspace_.data()));
  }

  Precision precision() const noexcept override { return precision_of<Value>(); }
  std::size_t device_bytes() const noexcept override {
    // The arrays the descriptor names: the converted one and the two of the CSR it shares.
    const std::size_t shared = CusparseCsrRules::index_bytes(nnz_) == 4
                                   ? csr_->col_indices.bytes() + csr_->values.bytes()
                                   : csr_->row_offsets.bytes() + csr_->values.bytes();
    return converted_->bytes() + shared + workspace_.bytes();
  }

 private:
  ConstDnVecPtr make_x(const void* x) const {
    cusparseConstDnVecDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateConstDnVec(&descr, cols_, x, value_type<Value>()));
    return ConstDnVecPtr(descr);
  }
  DnVecPtr make_y(void* y) const {
    cusparseDnVecDescr_t descr = nullptr;
    SPMVD_CUSPARSE_CHECK(cusparseCreateDnVec(&descr, rows_, y, value_type<Value>()));
    return DnVecPtr(descr);
  }

  std::int64_t rows_;
  std::int64_t cols_;
  std::int64_t nnz_;
  cusparseSpMVAlg_t algorithm_;
  cudaStream_t stream_;
  std::shared_ptr<const DeviceCsrArrays> csr_;     // the source's, shared
  std::shared_ptr<const DeviceBuffer> converted_;  // int32 offsets or int64 columns, shared
  DeviceBuffer workspace_;
  // Declared after the buffers so they are destroyed before them.
  HandlePtr handle_;
  SpMatPtr matrix_;
};

}  // namespace

std::unique_ptr<SpmvOperator> CusparseCsrRules::build(const BuildSource& source,
                                                      Precision precision,
                                                      const Candidate& candidate) {
  check_candidate_format("cusparse_csr", kCusparseCsrFormatId, candidate);
  const CusparseCsrParams params = params_of(candidate);
  const std::uint32_t algorithm = params.library_algorithm;
  if (algorithm != kCusparseSpmvCsrAlg1 && algorithm != kCusparseSpmvCsrAlg2)
    throw_invalid("cusparse_csr: library_algorithm " + std::to_string(algorithm) +
                  " is not CUSPARSE_SPMV_CSR_ALG1 (2) or CUSPARSE_SPMV_CSR_ALG2 (3)");
  check_gpu_device("cusparse_csr", source.device());
  const auto alg = static_cast<cusparseSpMVAlg_t>(algorithm);
  if (precision == Precision::fp32)
    return std::make_unique<CusparseCsrOperator<float>>(source, alg);
  return std::make_unique<CusparseCsrOperator<double>>(source, alg);
}

}  // namespace spmvd
