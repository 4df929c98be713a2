#pragma once
#include <compare>
#include <cstdint>

namespace spmvd {

// A storage format's stored identity. Numbers are append-only (they are in the plan cache);
// each format defines its own in its folder and the registry refuses duplicates.
struct FormatId {
  std::uint16_t value = 0;
  // Written out rather than defaulted: nvcc 13.0 declares a defaulted friend comparison in a
  // .cu file without emitting its definition (undefined reference at link time).
  friend constexpr bool operator==(FormatId a, FormatId b) noexcept { return a.value == b.value; }
  friend constexpr auto operator<=>(FormatId a, FormatId b) noexcept { return a.value <=> b.value; }
};

}  // namespace spmvd
