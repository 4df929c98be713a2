#pragma once
// The CUDA launch of one candidate. Plain values with == and one field list (for_each_field)
// from which printing and (de)serialisation are derived. Every field holds a concrete value in
// a Plan; 0 means "this format launches no such thing", never "auto". A format's own
// parameters are its own struct (core/format_params.hpp).

#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>

namespace spmvd {

struct LaunchConfig {
  std::uint32_t block_size = 0;       // CUDA threads per block
  std::uint32_t threads_per_row = 0;  // lanes cooperating on one row (CSR vector)
  std::uint32_t grid_size = 0;        // CUDA blocks in the grid
  friend bool operator==(const LaunchConfig&, const LaunchConfig&) = default;
};

template <typename Config, typename Visit>
  requires std::is_same_v<std::remove_const_t<Config>, LaunchConfig>
void for_each_field(Config& c, Visit&& visit) {
  visit("block_size", c.block_size);
  visit("threads_per_row", c.threads_per_row);
  visit("grid_size", c.grid_size);
}

// Prints the non-zero fields: "block_size=256 threads_per_row=8".
std::ostream& operator<<(std::ostream& os, const LaunchConfig& c);
std::string to_string(const LaunchConfig& c);

}  // namespace spmvd
