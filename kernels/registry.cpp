// The one list of formats (ARCHITECTURE.md "Formats"). Adding a format: its folder and one line
// here. Ids are explicit in each format's rules header and append-only; FormatRegistry::add
// refuses duplicates, so a clash fails at start-up. Every format's rules are pure C++ and
// registered in every build (feature extraction runs every format's hooks, the tests see every
// rule); a GPU format's builder exists only where CUDA is compiled.

#include <string>

#include "core/error.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cpu_coo/cpu_coo_rules.hpp"
#include "kernels/formats/cpu_csr/cpu_csr_rules.hpp"
#include "kernels/formats/cuda_bce/cuda_bce_rules.hpp"
#include "kernels/formats/cuda_bro_coo/cuda_bro_coo_rules.hpp"
#include "kernels/formats/cuda_bro_ell/cuda_bro_ell_rules.hpp"
#include "kernels/formats/cuda_bro_hyb/cuda_bro_hyb_rules.hpp"
#include "kernels/formats/cpu_gpu_split/cpu_gpu_split_rules.hpp"
#include "kernels/formats/cuda_coo/cuda_coo_rules.hpp"
#include "kernels/formats/cuda_csr_rcm/cuda_csr_rcm_rules.hpp"
#include "kernels/formats/cuda_csr_scalar/cuda_csr_scalar_rules.hpp"
#include "kernels/formats/cuda_csr_vector/cuda_csr_vector_rules.hpp"
#include "kernels/formats/cuda_dia/cuda_dia_rules.hpp"
#include "kernels/formats/cuda_ehyb/cuda_ehyb_rules.hpp"
#include "kernels/formats/cuda_ell/cuda_ell_rules.hpp"
#include "kernels/formats/cuda_hyb/cuda_hyb_rules.hpp"
#include "kernels/formats/cuda_sell/cuda_sell_rules.hpp"
#include "kernels/formats/cuda_strip/cuda_strip_rules.hpp"
#include "kernels/formats/cusparse_bsr/cusparse_bsr_rules.hpp"
#include "kernels/formats/cusparse_coo/cusparse_coo_rules.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"
#include "kernels/formats/cusparse_sell/cusparse_sell_rules.hpp"

namespace spmvd {
namespace {

// A GPU format: its builder where this build compiled CUDA, else one that says so.
template <typename Format>
void add_gpu_format(FormatRegistry& registry) {
#if SPMVD_WITH_CUDA
  registry.add<Format>();
#else
  registry.add(std::make_unique<Format>(),
               [](const BuildSource&, Precision,
                  const Candidate& candidate) -> std::unique_ptr<SpmvOperator> {
                 throw Error(ErrorCode::failed_precondition,
                             "format " + std::to_string(candidate.format.value) +
                                 " needs CUDA, and this build has none (-DSPMVD_WITH_CUDA=OFF)");
               });
#endif
}

FormatRegistry build_registry() {
  FormatRegistry registry;
  registry.add<CpuCsrRules>();
  registry.add<CpuCooRules>();
  add_gpu_format<CudaCsrVectorRules>(registry);
  add_gpu_format<CusparseCsrRules>(registry);
  add_gpu_format<CudaCsrScalarRules>(registry);
  add_gpu_format<CudaEllRules>(registry);
  add_gpu_format<CudaCooRules>(registry);
  add_gpu_format<CudaHybRules>(registry);
  add_gpu_format<CudaSellRules>(registry);
  add_gpu_format<CusparseCooRules>(registry);
  add_gpu_format<CusparseSellRules>(registry);
  add_gpu_format<CusparseBsrRules>(registry);
  add_gpu_format<CudaDiaRules>(registry);
  add_gpu_format<CudaBceRules>(registry);
  add_gpu_format<CudaStripRules>(registry);
  add_gpu_format<CpuGpuSplitRules>(registry);
  add_gpu_format<CudaBroEllRules>(registry);
  add_gpu_format<CudaBroCooRules>(registry);
  add_gpu_format<CudaBroHybRules>(registry);
  add_gpu_format<CudaEhybRules>(registry);
  add_gpu_format<CudaCsrRcmRules>(registry);
  return registry;
}

}  // namespace

const FormatRegistry& format_registry() {
  static const FormatRegistry registry = build_registry();
  return registry;
}

}  // namespace spmvd
