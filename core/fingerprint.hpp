#pragma once
// The structural fingerprint: a 128-bit XXH3 hash of the dimensions, row offsets and column
// indices of a CSR matrix (not its values: values do not change which plan is fastest).
// Identical structure => identical fingerprint on every machine (little-endian hosts).

#include <cstdint>
#include <string>

#include "core/csr_matrix.hpp"

namespace spmvd {

struct Fingerprint {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
  std::string hex() const;  // 32 lowercase hex digits, high word first
};

template <typename Value>
Fingerprint structural_fingerprint(const CsrMatrix<Value>& m);

}  // namespace spmvd
