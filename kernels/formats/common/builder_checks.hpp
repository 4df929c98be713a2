#pragma once
// The argument checks every catalogue builder starts with, so their messages read the same:
// "cuda_ell: block_size 100 is not one of 128, 256, 512".

#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/candidate.hpp"
#include "kernels/device.hpp"

namespace spmvd {

// Error(invalid_argument) unless candidate.format == expected.
void check_candidate_format(std::string_view format, FormatId expected, const Candidate& candidate);
// Error(invalid_argument) unless `value` (the field `field`) is one of `allowed`.
void check_one_of(std::string_view format, std::string_view field, std::uint32_t value,
                  std::span<const std::uint32_t> allowed);
// Error(failed_precondition) unless `device` is a GPU.
void check_gpu_device(std::string_view format, const Device& device);
// Error(failed_precondition) unless `device` is the CPU (CPU kernels read x and y as host memory).
void check_cpu_device(std::string_view format, const Device& device);

}  // namespace spmvd
