#pragma once
// Every format's rules in one registry, whether or not this build compiled its kernels (the
// CPU-only build registers only cpu_csr and cpu_coo in format_registry()): feature extraction
// given this registry runs every format's own_features hook, and a test can iterate every
// format's rules. Its entries build nothing: format_registry() builds.

#include <memory>

#include "core/error.hpp"
#include "kernels/format_registry.hpp"
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

namespace spmvd::testing {

inline std::unique_ptr<SpmvOperator> build_nothing(const CsrMatrix<double>&, Precision,
                                                   const Candidate&, Device&) {
  throw Error(ErrorCode::internal, "every_format_rules() builds nothing: use format_registry()");
}

// The registry of every format's rules, in registry.cpp's order.
inline const FormatRegistry& every_format_rules() {
  static const FormatRegistry registry = [] {
    FormatRegistry r;
    r.add(std::make_unique<CpuCsrRules>(), &build_nothing);
    r.add(std::make_unique<CpuCooRules>(), &build_nothing);
    r.add(std::make_unique<CudaCsrVectorRules>(), &build_nothing);
    r.add(std::make_unique<CusparseCsrRules>(), &build_nothing);
    r.add(std::make_unique<CudaCsrScalarRules>(), &build_nothing);
    r.add(std::make_unique<CudaEllRules>(), &build_nothing);
    r.add(std::make_unique<CudaCooRules>(), &build_nothing);
    r.add(std::make_unique<CudaHybRules>(), &build_nothing);
    r.add(std::make_unique<CudaSellRules>(), &build_nothing);
    r.add(std::make_unique<CusparseCooRules>(), &build_nothing);
    r.add(std::make_unique<CusparseSellRules>(), &build_nothing);
    r.add(std::make_unique<CusparseBsrRules>(), &build_nothing);
    return r;
  }();
  return registry;
}

}  // namespace spmvd::testing
