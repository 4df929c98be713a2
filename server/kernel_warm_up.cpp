#include "server/kernel_warm_up.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <limits>

#include "kernels/build_source.hpp"
#include "models/sample_generators.hpp"
#include "tuner/feature_extraction.hpp"

namespace spmvd {
namespace {

constexpr std::int64_t kWarmUpRows = 4096;
constexpr std::int64_t kWarmUpRowLength = 8;
constexpr std::int64_t kWarmUpLongRow = 1000;
constexpr std::int64_t kWarmUpBlockDim = 4;
constexpr std::uint64_t kWarmUpSeed = 20261207;

}  // namespace

std::vector<CsrMatrix<double>> warm_up_matrices() {
  const CsrMatrix<double> band =
      banded_row_length_sample(kWarmUpRows, kWarmUpRowLength, kWarmUpSeed);
  std::vector<CsrMatrix<double>> out;
  out.push_back(with_long_row(
      uniform_row_length_sample(kWarmUpRows, kWarmUpRowLength, kWarmUpSeed), kWarmUpLongRow));
  out.push_back(band);
  out.push_back(renumber_symmetric(band, kWarmUpSeed));
  out.push_back(blocked_sample(
      banded_row_length_sample(kWarmUpRows / kWarmUpBlockDim, 3, kWarmUpSeed), kWarmUpBlockDim));
  return out;
}

std::vector<WarmUpCandidate> warm_up_candidates(const FormatRegistry& registry,
                                                const MatrixFeatures& features,
                                                const DeviceInfo& device, Precision precision) {
  std::vector<WarmUpCandidate> out;
  for (const FormatEntry& entry : registry.entries()) {
    try {
      if (!entry.rules->admissible(features, device, precision,
                                   std::numeric_limits<std::uint64_t>::max()))
        continue;
      for (Candidate& candidate : entry.rules->candidates(features, device))
        out.push_back({&entry, std::move(candidate)});
    } catch (const std::exception& e) {
      spdlog::debug("kernel warm-up: {} offers no candidate here: {}", entry.rules->name(),
                    e.what());
    }
  }
  return out;
}

KernelWarmUp warm_up_kernels(const FormatRegistry& registry, Device& device) {
  KernelWarmUp out;
  if (!device.info().is_gpu) return out;
  const auto start = std::chrono::steady_clock::now();
  for (const CsrMatrix<double>& sample : warm_up_matrices()) {
    // Every format's own features: each offers its candidates as it would to a tuning.
    const MatrixFeatures features = extract_features(sample, registry, FeatureEffort::thorough);
    const BuildSource source(sample, device);
    for (const Precision precision : {Precision::fp32, Precision::fp64}) {
      const std::size_t vb = value_bytes(precision);
      DeviceBuffer x(device, static_cast<std::size_t>(sample.cols) * vb);
      DeviceBuffer y(device, static_cast<std::size_t>(sample.rows) * vb);
      device.fill_bytes(x.data(), 0x3F, x.bytes());  // finite, normal values in either precision
      for (const WarmUpCandidate& c :
           warm_up_candidates(registry, features, device.info(), precision)) {
        ++out.candidates;
        try {
          c.entry->build(source, precision, c.candidate)->apply(x.data(), y.data(), 1.0, 0.0);
          device.synchronize();
        } catch (const std::exception& e) {  // any failure: counted, the daemon still starts
          ++out.failed;
          spdlog::debug("kernel warm-up: {} {}: {}", c.entry->rules->name(),
                        to_string(precision), e.what());
        }
      }
    }
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count();
  return out;
}

}  // namespace spmvd
