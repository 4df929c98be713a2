#include "kernels/formats/common/builder_checks.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace spmvd {

void check_candidate_format(std::string_view format, FormatId expected,
                            const Candidate& candidate) {
  if (candidate.format != expected)
    throw_invalid(std::string(format) + ": candidate of format id " +
                  std::to_string(candidate.format.value) + " given to the " + std::string(format) +
                  " builder (id " + std::to_string(expected.value) + ")");
}

void check_one_of(std::string_view format, std::string_view field, std::uint32_t value,
                  std::span<const std::uint32_t> allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  std::string list;
  for (const std::uint32_t a : allowed) list += (list.empty() ? "" : ", ") + std::to_string(a);
  throw_invalid(std::string(format) + ": " + std::string(field) + " " + std::to_string(value) +
                " is not one of " + list);
}

void check_gpu_device(std::string_view format, const Device& device) {
  if (!device.info().is_gpu)
    throw Error(
        ErrorCode::failed_precondition,
        std::string(format) + ": cannot build on the CPU device '" + device.info().name + "'");
}

void check_cpu_device(std::string_view format, const Device& device) {
  if (device.info().is_gpu)
    throw Error(ErrorCode::failed_precondition,
                std::string(format) + ": cannot build on GPU device '" + device.info().name +
                    "' (the CPU kernel reads x and y as host memory)");
}

}  // namespace spmvd
