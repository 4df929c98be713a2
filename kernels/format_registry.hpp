#pragma once
// Every compiled format, registered once (registry.cpp). Append-only ids; duplicate ids or
// names are refused at start-up. Everything that lists formats iterates this registry.

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/csr_matrix.hpp"
#include "kernels/device.hpp"
#include "kernels/format_rules.hpp"
#include "kernels/spmv_operator.hpp"

namespace spmvd {

// Builds the format from a host CSR on `device`, values converted to `precision`. Throws
// Error(resource_exhausted) when device memory runs out, Error(invalid_argument) when the
// candidate does not fit the matrix.
using BuildOperatorFn = std::unique_ptr<SpmvOperator> (*)(const CsrMatrix<double>& matrix,
                                                          Precision precision,
                                                          const Candidate& candidate,
                                                          Device& device);

struct FormatEntry {
  std::unique_ptr<FormatRules> rules;
  BuildOperatorFn build = nullptr;
};

class FormatRegistry {
 public:
  // Throws Error(internal) on a duplicate id or name.
  void add(std::unique_ptr<FormatRules> rules, BuildOperatorFn build);
  // The one line a format adds to registry.cpp.
  template <typename Format>
  void add() {
    add(std::make_unique<Format>(), &Format::build);
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
