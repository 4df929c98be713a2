#pragma once
// Launch and format parameters of one candidate. Plain values with == and one field list
// (for_each_field) from which printing and (de)serialisation are derived. Every field holds a
// concrete value in a Plan; 0 means "this format has no such parameter", never "auto".

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

struct FormatParams {
  std::uint32_t ell_width = 0;          // ELL / HYB: entries per row kept in the ELL part (K)
  std::uint32_t slice_height = 0;       // sliced ELL: rows per slice (C)
  std::uint32_t sort_window = 0;        // SELL-C-sigma: rows sorted together (sigma)
  std::uint32_t library_algorithm = 0;  // cuSPARSE: cusparseSpMVAlg_t value
  std::uint32_t block_dim = 0;          // BSR: block edge
  friend bool operator==(const FormatParams&, const FormatParams&) = default;
};

template <typename Params, typename Visit>
  requires std::is_same_v<std::remove_const_t<Params>, FormatParams>
void for_each_field(Params& p, Visit&& visit) {
  visit("ell_width", p.ell_width);
  visit("slice_height", p.slice_height);
  visit("sort_window", p.sort_window);
  visit("library_algorithm", p.library_algorithm);
  visit("block_dim", p.block_dim);
}

// Prints the non-zero fields: "block_size=256 threads_per_row=8".
std::ostream& operator<<(std::ostream& os, const LaunchConfig& c);
std::ostream& operator<<(std::ostream& os, const FormatParams& p);
std::string to_string(const LaunchConfig& c);
std::string to_string(const FormatParams& p);

}  // namespace spmvd
