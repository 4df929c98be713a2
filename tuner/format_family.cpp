#include "tuner/format_family.hpp"

#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"

namespace spmvd {

std::optional<ModelFamily> listed_model_family(FormatId format) noexcept {
  struct Row {
    FormatId format;
    ModelFamily family;
  };
  // Why each row:
  //   cuda_csr_vector   paper 004 Sec. 4.3.1, calibrated per threads_per_row 2-32;
  //   cuda_csr_scalar   the same model with one lane per row: calibration times it as the
  //                     threads_per_row = 1 variant (models/calibration.hpp);
  //   cuda_ell, cuda_coo, cuda_hyb   Sec. 4.3.2 and 4.3.3 with the kernels they were fitted on;
  //   cpu_coo           the COO line, fitted on cpu_coo when calibrating the CPU device;
  //   cuSPARSE formats, SELL, CPU CSR   no dedicated model: the bytes model, fitted per
  //                     format by calibration stage format_bytes (models/calibration.hpp's
  //                     has_format_bytes_stage lists these rows), the shared cuSPARSE CSR / CPU
  //                     CSR fit where a format has none.
  // One format per line:
  // clang-format off
  static constexpr Row kRows[] = {
      {kCpuCsrFormatId, ModelFamily::other},
      {kCudaCsrVectorFormatId, ModelFamily::csr_vector},
      {kCusparseCsrFormatId, ModelFamily::other},
      {kCudaCsrScalarFormatId, ModelFamily::csr_vector},
      {kCudaEllFormatId, ModelFamily::ell},
      {kCudaCooFormatId, ModelFamily::coo},
      {kCudaHybFormatId, ModelFamily::hyb},
      {kCudaSellFormatId, ModelFamily::other},
      {kCusparseCooFormatId, ModelFamily::other},
      {kCusparseSellFormatId, ModelFamily::other},
      {kCusparseBsrFormatId, ModelFamily::other},
      {kCpuCooFormatId, ModelFamily::coo},
  };
  // clang-format on

  for (const Row& row : kRows)
    if (row.format == format) return row.family;
  return std::nullopt;
}

ModelFamily model_family(FormatId format) noexcept {
  return listed_model_family(format).value_or(ModelFamily::other);
}

}  // namespace spmvd
