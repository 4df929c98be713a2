#pragma once
// The one byte count that every format's "effective bandwidth" is computed from, so that
// formats are comparable with each other and with the measured copy bandwidth: the bytes a
// CSR SpMV must move at least,
//
//   nnz * (value + 4)        values and 32-bit column indices
//   + (rows + 1) * 8         64-bit row offsets (core/csr_matrix.hpp RowOffset)
//   + cols * value           x read once (re-reads served by a cache are not counted)
//   + rows * value           y written once
//   + rows * value           y read too, only when beta != 0
//
// A format that moves fewer bytes than this (e.g. blocked, index-compressed) shows an effective
// bandwidth above what it streams; one that pads shows less. Each format's own footprint is
// reported beside it (SpmvOperator::device_bytes).

#include <cstdint>

#include "core/precision.hpp"

namespace spmvd {

constexpr std::uint64_t csr_byte_count(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                       Precision precision, bool beta_nonzero) noexcept {
  const auto value = static_cast<std::uint64_t>(value_bytes(precision));
  const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols),
             n = static_cast<std::uint64_t>(nnz);
  return n * (value + 4) + (r + 1) * 8 + c * value + r * value * (beta_nonzero ? 2 : 1);
}

}  // namespace spmvd
