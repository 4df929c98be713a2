#include "db/plan_key.hpp"

namespace spmvd {

std::string to_string(const PlanKey& key) {
  return "fingerprint=" + key.fingerprint.hex() + " device='" + key.device_signature +
         "' precision=" + std::string(to_string(key.precision)) +
         " tuner_version=" + std::to_string(key.tuner_version) +
         " model_version=" + std::to_string(key.model_version);
}

std::optional<Fingerprint> fingerprint_from_hex(std::string_view hex) noexcept {
  if (hex.size() != 32) return std::nullopt;
  const auto word = [](std::string_view digits) -> std::optional<std::uint64_t> {
    std::uint64_t value = 0;
    for (const char c : digits) {
      int nibble = 0;
      if (c >= '0' && c <= '9') {
        nibble = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        nibble = c - 'a' + 10;
      } else {
        return std::nullopt;  // hex() writes lowercase only
      }
      value = (value << 4) | static_cast<std::uint64_t>(nibble);
    }
    return value;
  };
  const auto high = word(hex.substr(0, 16));
  const auto low = word(hex.substr(16));
  if (!high || !low) return std::nullopt;
  return Fingerprint{.high = *high, .low = *low};
}

}  // namespace spmvd
