#include "core/precision.hpp"

namespace spmvd {

std::optional<Precision> parse_precision(std::string_view text) noexcept {
  if (text == "fp32" || text == "float" || text == "single") return Precision::fp32;
  if (text == "fp64" || text == "double") return Precision::fp64;
  return std::nullopt;
}

}  // namespace spmvd
