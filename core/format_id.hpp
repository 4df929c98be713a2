#pragma once
#include <compare>
#include <cstdint>

namespace spmvd {

// A storage format's stored identity. Numbers are append-only (they are in the plan cache);
// each format defines its own in its folder and the registry refuses duplicates.
struct FormatId {
  std::uint16_t value = 0;
  friend auto operator<=>(const FormatId&, const FormatId&) = default;
};

}  // namespace spmvd
