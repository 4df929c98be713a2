#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace spmvd {

// Value precision of a resident matrix and its vectors. Numbers are stored in the plan cache.
enum class Precision : std::uint8_t { fp32 = 1, fp64 = 2 };

constexpr std::size_t value_bytes(Precision p) noexcept { return p == Precision::fp32 ? 4 : 8; }
constexpr std::string_view to_string(Precision p) noexcept {
  return p == Precision::fp32 ? "fp32" : "fp64";
}
std::optional<Precision> parse_precision(std::string_view text) noexcept;

template <typename Value>
constexpr Precision precision_of() noexcept {
  static_assert(sizeof(Value) == 4 || sizeof(Value) == 8);
  return sizeof(Value) == 4 ? Precision::fp32 : Precision::fp64;
}

}  // namespace spmvd
