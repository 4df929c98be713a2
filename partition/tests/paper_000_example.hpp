#pragma once
// The 10 x 10 matrix of paper 000 Sec. 5.1, shared by the partitioning tests.

#include <array>
#include <cstdint>
#include <vector>

namespace spmvd::testing {

// Copied from paper 000 Sec. 5.1 (rows r1..r10).
inline constexpr std::array<std::array<int, 10>, 10> kPaper000Matrix{{
    {3, 0, 0, 0, 1, 0, 0, 0, 0, 0},
    {0, 0, 9, -1, 0, 0, 7, 0, 0, 0},
    {0, 4, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 12, 3, 0, 0, 0, 0, 0},
    {-1, 8, 0, 2, 0, 5, 0, 2, 7, 9},
    {0, 0, 0, 0, 0, 0, -6, 0, 0, 0},
    {0, 0, 6, 4, 0, 0, 0, 3, 0, 0},
    {0, 2, 0, 5, 0, 0, 8, 0, 1, 0},
    {2, 1, 0, 5, 0, 3, 7, 0, 0, 4},
    {0, 0, 3, 0, 0, 7, 0, 0, 0, 0},
}};

// Its CSR row offsets, counted from the dense matrix above.
inline std::vector<std::int64_t> paper_000_row_offsets() {
  std::vector<std::int64_t> offsets{0};
  for (const auto& row : kPaper000Matrix) {
    std::int64_t length = 0;
    for (const int value : row) length += value != 0 ? 1 : 0;
    offsets.push_back(offsets.back() + length);
  }
  return offsets;
}

}  // namespace spmvd::testing
