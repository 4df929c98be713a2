#include "core/tuning_record.hpp"

namespace spmvd {

std::string_view to_string(TuneMode mode) noexcept {
  switch (mode) {
    case TuneMode::model_only:
      return "model-only";
    case TuneMode::verify_top_k:
      return "verify-top-k";
    case TuneMode::exhaustive:
      return "exhaustive";
  }
  return "unknown";
}

std::optional<TuneMode> parse_tune_mode(std::string_view text) noexcept {
  for (const TuneMode mode : {TuneMode::model_only, TuneMode::verify_top_k, TuneMode::exhaustive})
    if (text == to_string(mode)) return mode;
  return std::nullopt;
}

}  // namespace spmvd
