#include "bench/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "bench/byte_model.hpp"
#include "bench/result_check.hpp"
#include "bench/timing_stats.hpp"
#include "core/error.hpp"
#include "kernels/format_registry.hpp"
#include "kernels/formats/cusparse_csr/cusparse_csr_rules.hpp"

namespace spmvd {
namespace {

// The rotated x/y buffers of one precision.
struct VectorPairs {
  std::vector<DeviceBuffer> x, y;
  std::size_t y_bytes = 0;
  int count() const noexcept { return static_cast<int>(x.size()); }
};

int buffer_pair_count(const CsrMatrix<double>& m, const DeviceInfo& info, Precision precision,
                      const SweepOptions& options) {
  const std::uint64_t vb = value_bytes(precision);
  const std::uint64_t xy_bytes = static_cast<std::uint64_t>(m.rows + m.cols) * vb;
  const std::uint64_t matrix_bytes = csr_byte_count(m.rows, m.cols, m.nnz(), precision, false);
  if (!options.rotate_vectors || info.l2_bytes == 0 || xy_bytes == 0 ||
      matrix_bytes >= info.l2_bytes)
    return 1;
  // Enough pairs that the others touched since a pair's last use exceed 1.5x L2.
  auto pairs = static_cast<std::int64_t>(std::ceil(1.5 * static_cast<double>(info.l2_bytes) /
                                                   static_cast<double>(xy_bytes))) + 1;
  pairs = std::clamp<std::int64_t>(pairs, 2, std::max(2, options.max_buffer_pairs));
  if (options.memory_budget_bytes > 0)
    while (pairs > 1 && static_cast<std::uint64_t>(pairs) * xy_bytes > options.memory_budget_bytes / 8) --pairs;
  return static_cast<int>(pairs);
}

template <typename Value>
VectorPairs make_pairs(Device& device, const SpmvReference& ref, std::size_t rows, int count) {
  VectorPairs pairs;
  const std::vector<Value> x(ref.x.begin(), ref.x.end());
  pairs.y_bytes = rows * sizeof(Value);
  for (int i = 0; i < count; ++i) {
    pairs.x.push_back(upload(device, x.data(), x.size()));
    pairs.y.emplace_back(device, pairs.y_bytes);
    device.fill_bytes(pairs.y.back().data(), 0, pairs.y_bytes);
  }
  device.synchronize();
  return pairs;
}

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

template <typename Value>
void run_candidate(const BuildSource& source, const FormatEntry& entry,
                   const SpmvReference& ref, VectorPairs& pairs, const SweepOptions& options,
                   CandidateResult& result) {
  const CsrMatrix<double>& m = source.host();
  Device& device = source.device();
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<SpmvOperator> op;
  try {
    op = entry.build(source, result.precision, result.candidate);
    device.synchronize();
  } catch (const std::exception& e) {  // Error, or bad_alloc from a host-side builder
    result.status = CandidateStatus::build_error;
    result.message = e.what();
    return;
  }
  result.build_ms = elapsed_ms(start);
  result.device_bytes = op->device_bytes();
  result.buffer_pairs = pairs.count();
  try {
    void* y0 = pairs.y[0].data();
    device.fill_bytes(y0, 0xFF, pairs.y_bytes);  // NaN everywhere: unwritten rows show
    op->apply(pairs.x[0].data(), y0, 1.0, 0.0);
    std::vector<Value> y(static_cast<std::size_t>(m.rows));
    device.copy_to_host(y.data(), y0, pairs.y_bytes);
    device.synchronize();
    const CheckOutcome check = check_spmv_result(y, ref);
    result.max_error_ratio = check.max_error_ratio;
    if (!check.passed()) {
      result.message = check.message;
      result.status = CandidateStatus::failed;
      return;
    }
    const int n = pairs.count();
    for (int i = 0; i < options.warmup; ++i)
      op->apply(pairs.x[i % n].data(), pairs.y[i % n].data(), 1.0, 0.0);
    device.synchronize();
    std::vector<double> times_ms;
    const auto time_applies = [&](int count) {
      for (int i = 0; i < count; ++i) {
        const std::size_t p = (static_cast<std::size_t>(options.warmup) + times_ms.size()) %
                              static_cast<std::size_t>(n);
        times_ms.push_back(
            device.time_ms([&] { op->apply(pairs.x[p].data(), pairs.y[p].data(), 1.0, 0.0); }));
      }
    };
    time_applies(options.reps);
    if (options.short_reps > options.reps &&
        summarize_timings(times_ms).median_ms < options.short_ms)
      time_applies(options.short_reps - options.reps);
    device.synchronize();
    result.timed_reps = static_cast<int>(times_ms.size());
    const TimingStats stats = summarize_timings(std::move(times_ms));
    result.median_ms = stats.median_ms;
    result.min_ms = stats.min_ms;
    result.p90_ms = stats.p90_ms;
  } catch (const std::exception& e) {  // Error, or bad_alloc from a host-side builder
    result.status = CandidateStatus::run_error;
    result.message = e.what();
  }
}

bool is_cusparse_alg1(const Candidate& c) {
  return c.format == kCusparseCsrFormatId && CusparseCsrRules::params_of(c).library_algorithm == kCusparseSpmvCsrAlg1;
}

std::vector<Candidate> chosen_candidates(const FormatRules& rules, const MatrixFeatures& features,
                                         const DeviceInfo& info, std::size_t limit,
                                         const PartTimePredictor* parts) {
  const std::vector<Candidate> all = rules.candidates(features, info);
  std::vector<Candidate> chosen;
  for (const std::size_t i : spaced_picks(all.size(), limit)) chosen.push_back(all[i]);
  // What a composed format chooses against the models is what the tuner measures: all of it.
  if (parts != nullptr)
    for (const Candidate& c : rules.candidates_chosen_by(*parts, features, info))
      if (std::find(all.begin(), all.end(), c) == all.end() &&
          std::find(chosen.begin(), chosen.end(), c) == chosen.end())
        chosen.push_back(c);
  // The cuSPARSE CSR ALG1 baseline is always measured: every ratio is relative to it.
  for (const auto& c : all)
    if (is_cusparse_alg1(c) && std::find(chosen.begin(), chosen.end(), c) == chosen.end())
      chosen.push_back(c);
  return chosen;
}

void fill_derived_metrics(const CsrMatrix<double>& m, const CopyBandwidth& copy,
                          std::vector<CandidateResult>& results, std::size_t first) {
  std::optional<double> alg1_ms, best_cusparse_ms;
  for (std::size_t i = first; i < results.size(); ++i) {
    const auto& r = results[i];
    if (!r.correct()) continue;
    if (is_cusparse_alg1(r.candidate)) alg1_ms = r.median_ms;
    if (r.format.starts_with("cusparse_"))
      best_cusparse_ms = std::min(best_cusparse_ms.value_or(r.median_ms), r.median_ms);
  }
  for (std::size_t i = first; i < results.size(); ++i) {
    auto& r = results[i];
    r.csr_model_bytes = csr_byte_count(m.rows, m.cols, m.nnz(), r.precision, false);
    if (!r.correct() || r.median_ms <= 0.0) continue;
    r.gflops = 2.0 * static_cast<double>(m.nnz()) / (r.median_ms * 1e6);
    r.effective_gb_per_s = static_cast<double>(r.csr_model_bytes) / (r.median_ms * 1e6);
    if (copy.gb_per_s > 0) r.fraction_of_copy_bandwidth = r.effective_gb_per_s / copy.gb_per_s;
    if (alg1_ms) r.speedup_vs_cusparse_alg1 = *alg1_ms / r.median_ms;
    if (best_cusparse_ms) r.speedup_vs_best_cusparse = *best_cusparse_ms / r.median_ms;
  }
}

template <typename Value>
void sweep_precision(const CsrMatrix<double>& m, const MatrixFeatures& features, Device& device,
                     const CopyBandwidth& copy, const SweepOptions& options, Precision precision,
                     const SweepProgress& progress, SweepResult& out) {
  const DeviceInfo& info = device.info();
  const SpmvReference ref = make_spmv_reference(m, precision, options.x_seed);
  VectorPairs pairs = make_pairs<Value>(device, ref, static_cast<std::size_t>(m.rows),
                                        buffer_pair_count(m, info, precision, options));
  const std::size_t first = out.candidates.size();
  // The matrix is uploaded once, as the daemon does at Upload; each build starts from it.
  const BuildSource source(m, device);
  const auto upload_start = std::chrono::steady_clock::now();
  source.device_csr(precision);
  device.synchronize();
  out.csr_upload_ms[std::string(to_string(precision))] = elapsed_ms(upload_start);
  for (const FormatEntry& entry : format_registry().entries()) {
    const FormatRules& rules = *entry.rules;
    if (!options.formats.empty() &&
        std::find(options.formats.begin(), options.formats.end(), rules.name()) == options.formats.end())
      continue;
    // On the CPU only CPU formats run; on a GPU the rules decide (cpu_* refuse GPUs).
    if ((rules.needs_gpu() && !info.is_gpu) ||
        !rules.admissible(features, info, precision, options.memory_budget_bytes)) {
      out.inadmissible.push_back(std::string(to_string(precision)) + " " + std::string(rules.name()));
      continue;
    }
    for (const Candidate& candidate : candidates_within_memory_budget(
             rules, features, precision,
             chosen_candidates(rules, features, info, options.max_candidates_per_format,
                               precision == Precision::fp32 ? options.fp32_parts
                                                            : options.fp64_parts),
             options.memory_budget_bytes, out.inadmissible)) {
      CandidateResult result;
      result.precision = precision;
      result.format = std::string(rules.name());
      result.candidate = candidate;
      run_candidate<Value>(source, entry, ref, pairs, options, result);
      out.candidates.push_back(std::move(result));
      if (progress) progress(out.candidates.back());
    }
  }
  fill_derived_metrics(m, copy, out.candidates, first);
}

}  // namespace

const char* to_string(CandidateStatus status) noexcept {
  switch (status) {
    case CandidateStatus::ok: return "ok";
    case CandidateStatus::failed: return "FAILED";
    case CandidateStatus::build_error: return "build_error";
    case CandidateStatus::run_error: return "run_error";
  }
  return "unknown";
}

std::vector<Candidate> candidates_within_memory_budget(const FormatRules& rules,
                                                       const MatrixFeatures& features,
                                                       Precision precision,
                                                       std::vector<Candidate> candidates,
                                                       std::uint64_t memory_budget_bytes,
                                                       std::vector<std::string>& refused) {
  if (memory_budget_bytes == 0) return candidates;
  std::erase_if(candidates, [&](const Candidate& c) {
    const std::uint64_t bytes = rules.device_bytes(features, precision, c);
    if (bytes <= memory_budget_bytes) return false;
    refused.push_back(std::string(to_string(precision)) + " " + std::string(rules.name()) + " " +
                      to_string(c.params) + ": " + std::to_string(bytes) +
                      " device bytes over the memory budget of " +
                      std::to_string(memory_budget_bytes));
    return true;
  });
  return candidates;
}

std::vector<std::size_t> spaced_picks(std::size_t count, std::size_t limit) {
  std::vector<std::size_t> picks;
  if (limit == 0 || limit >= count) {
    for (std::size_t i = 0; i < count; ++i) picks.push_back(i);
  } else if (limit == 1) {
    picks.push_back(0);
  } else {
    for (std::size_t k = 0; k < limit; ++k) {
      const std::size_t i = (k * (count - 1) + (limit - 1) / 2) / (limit - 1);  // rounded
      if (picks.empty() || picks.back() != i) picks.push_back(i);
    }
  }
  return picks;
}

SweepResult sweep_matrix(const CsrMatrix<double>& matrix, const MatrixFeatures& features,
                         Device& device, const CopyBandwidth& copy, const SweepOptions& options,
                         const SweepProgress& progress) {
  for (const auto& name : options.formats) {
    if (format_registry().find(name)) continue;
    std::string known;
    for (const auto& entry : format_registry().entries())
      known += (known.empty() ? "" : ", ") + std::string(entry.rules->name());
    throw_invalid("unknown format '" + name + "' (this build has: " + known + ")");
  }
  SweepResult out;
  for (const Precision precision : options.precisions) {
    if (precision == Precision::fp32)
      sweep_precision<float>(matrix, features, device, copy, options, precision, progress, out);
    else
      sweep_precision<double>(matrix, features, device, copy, options, precision, progress, out);
  }
  return out;
}

}  // namespace spmvd
