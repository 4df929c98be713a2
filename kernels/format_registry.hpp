#pragma once
// Every compiled format, registered once (registry.cpp). Append-only ids; duplicate ids or
// names are refused at start-up. Everything that lists formats iterates this registry.

#include <concepts>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/build_source.hpp"
#include "kernels/device.hpp"
#include "kernels/format_rules.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Builds the format on source.device(), values converted to `precision`, from the source's
// host CSR or its shared device CSR (kernels/build_source.hpp). Throws
// Error(resource_exhausted) when device memory runs out, Error(invalid_argument) when the
// candidate does not fit the matrix. A builder runs its host algorithm (a layout, a partition)
// inside without_device_lock (kernels/device_lock.hpp): the caller's device lock is released
// for it, so multiplies of other matrices go on meanwhile.
using BuildOperatorFn = std::unique_ptr<SpmvOperator> (*)(const BuildSource& source,
                                                          Precision precision,
                                                          const Candidate& candidate);

struct FormatEntry {
  std::unique_ptr<FormatRules> rules;
  BuildOperatorFn build_from = nullptr;
  // Whether the builder converts from the source's CSR on the device (milliseconds for tens of
  // millions of nonzeros), rather than running a host algorithm (BRO's encoders, METIS, OPA)
  // and uploading its result (hundreds of milliseconds): the tuner's build cost estimate.
  bool builds_on_device = false;

  // The build of one candidate among several of the same matrix: shares the source's uploads.
  std::unique_ptr<SpmvOperator> build(const BuildSource& source, Precision precision,
                                      const Candidate& candidate) const {
    return build_from(source, precision, candidate);
  }
  // A build on its own: the matrix is uploaded for it (and freed with it where unused).
  std::unique_ptr<SpmvOperator> build(const CsrMatrix<double>& matrix, Precision precision,
                                      const Candidate& candidate, Device& device) const {
    const BuildSource source(matrix, device);
    return build_from(source, precision, candidate);
  }
};

// A choice among the registered formats (which to offer, which to compute features for).
using FormatFilter = std::function<bool(const FormatEntry&)>;

// A format builds either from a BuildSource (`build(const BuildSource&, Precision, const
// Candidate&)`: it converts on the device) or from the host CSR alone (`build(const
// CsrMatrix<double>&, Precision, const Candidate&, Device&)`: a host algorithm, METIS or OPA).
template <typename Format>
concept BuildsFromSource = requires(const BuildSource& source, Precision precision,
                                    const Candidate& candidate) {
  { Format::build(source, precision, candidate) } -> std::convertible_to<std::unique_ptr<SpmvOperator>>;
};

// A format that builds from a BuildSource but runs a host algorithm all the same (it reads the
// source's host CSR and the partitions the source holds: cuda_ehyb's METIS, cuda_bro_ell's RCM)
// says so with `static constexpr bool kBuildsOnHost = true;`, for the tuner's build cost.
template <typename Format>
constexpr bool builds_on_host() {
  if constexpr (requires { Format::kBuildsOnHost; })
    return Format::kBuildsOnHost;
  else
    return false;
}

template <typename Format>
std::unique_ptr<SpmvOperator> build_from_host(const BuildSource& source, Precision precision,
                                              const Candidate& candidate) {
  return Format::build(source.host(), precision, candidate, source.device());
}

class FormatRegistry {
 public:
  // Throws Error(internal) on a duplicate id or name.
  void add(std::unique_ptr<FormatRules> rules, BuildOperatorFn build,
           bool builds_on_device = false);
  // The one line a format adds to registry.cpp.
  template <typename Format>
  void add() {
    if constexpr (BuildsFromSource<Format>)
      add(std::make_unique<Format>(), &Format::build,
          /*builds_on_device=*/!builds_on_host<Format>());
    else
      add(std::make_unique<Format>(), &build_from_host<Format>);
  }
  const FormatEntry* find(FormatId id) const noexcept;
  const FormatEntry* find(std::string_view name) const noexcept;
  std::span<const FormatEntry> entries() const noexcept { return entries_; }

 private:
  std::vector<FormatEntry> entries_;
};

// The registry of every format compiled into this binary (GPU formats only with CUDA).
const FormatRegistry& format_registry();

}  // namespace spmvd
