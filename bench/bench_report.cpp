#include "bench/bench_report.hpp"

#include "kernels/format_registry.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "bench/feature_report.hpp"
#include "core/field_set_json.hpp"
#include "core/launch_config.hpp"

namespace spmvd {
namespace {

// "ell_width=4 block_size=256"; "-" when the candidate has no parameters at all.
std::string describe(const Candidate& c) {
  std::string params = to_string(c.params), launch = to_string(c.launch);
  if (params == "-") params.clear();
  if (launch == "-") launch.clear();
  if (params.empty() || launch.empty()) return params.empty() && launch.empty() ? "-" : params + launch;
  return params + " " + launch;
}

template <typename Fields>
nlohmann::json fields_to_json(const Fields& fields) {
  nlohmann::json out = nlohmann::json::object();
  for_each_field(fields, [&out](const char* name, const auto& value) { out[name] = value; });
  return out;
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// FormatEntry::builds_on_device of the format (false for one this build does not know).
bool builds_on_device(FormatId format) {
  const FormatEntry* entry = format_registry().find(format);
  return entry != nullptr && entry->builds_on_device;
}

nlohmann::json candidate_to_json(const CandidateResult& r) {
  return {
      {"precision", to_string(r.precision)},
      {"format", r.format},
      {"format_id", r.candidate.format.value},
      {"params", field_set_to_json(r.candidate.params, "benchmark params")},
      {"launch", fields_to_json(r.candidate.launch)},
      {"status", to_string(r.status)},
      {"correct", r.correct()},
      {"message", r.message},
      {"max_error_ratio", r.max_error_ratio},
      {"build_ms", r.build_ms},
      {"builds_on_device", builds_on_device(r.candidate.format)},
      {"time_ms", r.median_ms},
      {"min_ms", r.min_ms},
      {"p90_ms", r.p90_ms},
      {"timed_reps", r.timed_reps},
      {"buffer_pairs", r.buffer_pairs},
      {"gflops", r.gflops},
      {"csr_model_bytes", r.csr_model_bytes},
      {"effective_gb_per_s", r.effective_gb_per_s},
      {"fraction_of_copy_bandwidth", r.fraction_of_copy_bandwidth},
      {"device_bytes", r.device_bytes},
      {"speedup_vs_cusparse_alg1", optional_json(r.speedup_vs_cusparse_alg1)},
      {"speedup_vs_best_cusparse", optional_json(r.speedup_vs_best_cusparse)},
  };
}

// The fastest correct candidate of each (precision, format).
std::vector<const CandidateResult*> best_per_format(const MatrixReport& m) {
  std::map<std::pair<Precision, std::string>, const CandidateResult*> best;
  for (const auto& r : m.sweep.candidates) {
    if (!r.correct()) continue;
    auto& slot = best[{r.precision, r.format}];
    if (!slot || r.median_ms < slot->median_ms) slot = &r;
  }
  std::vector<const CandidateResult*> out;
  for (const auto& [key, r] : best) out.push_back(r);
  return out;
}

std::string ratio_text(const std::optional<double>& ratio) {
  if (!ratio) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", *ratio);
  return text;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_number(double value) {
  std::ostringstream text;
  text.precision(9);
  text << value;
  return text.str();
}

}  // namespace

nlohmann::json report_to_json(const BenchReport& report) {
  const auto& d = report.device;
  nlohmann::json matrices = nlohmann::json::array();
  for (const auto& m : report.matrices) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const auto& r : m.sweep.candidates) candidates.push_back(candidate_to_json(r));
    matrices.push_back({
        {"label", m.input.label},
        {"source", m.input.source},
        {"derived", m.input.derived()},
        {"derived_copies", m.input.copies},
        {"renumber_seed", m.input.renumber_seed},
        {"features", features_to_json(m.features, m.fingerprint, 5)},
        {"load_s", m.load_s},
        {"sweep_s", m.sweep_s},
        {"inadmissible", m.sweep.inadmissible},
        {"csr_upload_ms", m.sweep.csr_upload_ms},
        {"results", candidates},
    });
  }
  nlohmann::json precisions = nlohmann::json::array();
  for (const auto p : report.options.precisions) precisions.push_back(to_string(p));
  return {
      {"tool", "spmv-bench"},
      {"device", {{"is_gpu", d.is_gpu},
                  {"name", d.name},
                  {"signature", d.signature()},
                  {"sm_count", d.sm_count},
                  {"memory_bytes", d.memory_bytes},
                  {"l2_bytes", d.l2_bytes}}},
      {"copy_bandwidth", {{"buffer_bytes", report.copy.buffer_bytes},
                          {"reps", report.copy.reps},
                          {"median_ms", report.copy.median_ms},
                          {"gb_per_s", report.copy.gb_per_s},
                          {"counts", "read + write bytes, 1 GB = 1e9 bytes"}}},
      {"settings", {{"precisions", precisions},
                    {"reps", report.options.reps},
                    {"short_reps", report.options.short_reps},
                    {"short_ms", report.options.short_ms},
                    {"warmup", report.options.warmup},
                    {"vectors", report.options.rotate_vectors ? "rotated" : "hot"},
                    {"formats", report.options.formats},
                    {"max_candidates_per_format", report.options.max_candidates_per_format},
                    {"memory_budget_bytes", report.options.memory_budget_bytes},
                    {"x_seed", report.options.x_seed},
                    {"beta", 0.0},
                    {"byte_model", "csr_model_bytes = nnz*(value+4) + (rows+1)*8 + cols*value + "
                                   "rows*value (beta = 0)"}}},
      {"matrices", matrices},
      {"skipped", report.skipped},
      {"total_s", report.total_s},
  };
}

void write_csv(std::ostream& out, const BenchReport& report) {
  out << "matrix,source,derived,rows,cols,nnz,fingerprint,precision,format,candidate,status,correct,"
         "max_error_ratio,build_ms,time_ms,min_ms,p90_ms,buffer_pairs,gflops,csr_model_bytes,"
         "effective_gb_per_s,fraction_of_copy_bandwidth,device_bytes,speedup_vs_cusparse_alg1,"
         "speedup_vs_best_cusparse,message\n";
  for (const auto& m : report.matrices) {
    for (const auto& r : m.sweep.candidates) {
      const auto optional = [](const std::optional<double>& v) { return v ? csv_number(*v) : ""; };
      out << csv_field(m.input.label) << ',' << csv_field(m.input.source) << ','
          << (m.input.derived() ? "true" : "false") << ',' << m.features.rows << ','
          << m.features.cols << ',' << m.features.nnz << ',' << m.fingerprint.hex() << ','
          << to_string(r.precision) << ',' << r.format << ',' << csv_field(describe(r.candidate))
          << ',' << to_string(r.status) << ',' << (r.correct() ? "true" : "false") << ','
          << csv_number(r.max_error_ratio) << ',' << csv_number(r.build_ms) << ','
          << csv_number(r.median_ms) << ',' << csv_number(r.min_ms) << ','
          << csv_number(r.p90_ms) << ',' << r.buffer_pairs << ',' << csv_number(r.gflops) << ','
          << r.csr_model_bytes << ',' << csv_number(r.effective_gb_per_s) << ','
          << csv_number(r.fraction_of_copy_bandwidth) << ',' << r.device_bytes << ','
          << optional(r.speedup_vs_cusparse_alg1) << ',' << optional(r.speedup_vs_best_cusparse)
          << ',' << csv_field(r.message) << '\n';
    }
  }
}

void print_matrix_table(std::ostream& out, const MatrixReport& m) {
  char line[256];
  std::snprintf(line, sizeof line, "== %s%s: %lld x %lld, nnz %lld; load %.1f s, sweep %.1f s\n",
                m.input.label.c_str(), m.input.derived() ? " (derived)" : "",
                static_cast<long long>(m.features.rows), static_cast<long long>(m.features.cols),
                static_cast<long long>(m.features.nnz), m.load_s, m.sweep_s);
  out << line;
  std::snprintf(line, sizeof line, "   %-4s  %-18s %-34s %10s %8s %8s %6s %8s %7s %7s\n", "prec",
                "format", "params / launch", "time_ms", "GFLOP/s", "GB/s", "%copy", "dev_MB",
                "vsALG1", "vsBest");
  out << line;
  auto best = best_per_format(m);
  // Slowest first within each precision, so the best of each precision ends its block.
  std::sort(best.begin(), best.end(), [](const CandidateResult* a, const CandidateResult* b) {
    if (a->precision != b->precision) return a->precision < b->precision;
    return a->median_ms > b->median_ms;
  });
  for (const CandidateResult* r : best) {
    std::snprintf(line, sizeof line, "   %-4s  %-18s %-34s %10.4f %8.1f %8.1f %5.0f%% %8.1f %7s %7s\n",
                  std::string(to_string(r->precision)).c_str(), r->format.c_str(),
                  describe(r->candidate).substr(0, 34).c_str(), r->median_ms, r->gflops,
                  r->effective_gb_per_s, 100.0 * r->fraction_of_copy_bandwidth,
                  static_cast<double>(r->device_bytes) / 1e6,
                  ratio_text(r->speedup_vs_cusparse_alg1).c_str(),
                  ratio_text(r->speedup_vs_best_cusparse).c_str());
    out << line;
  }
  for (const auto& r : m.sweep.candidates)
    if (!r.correct())
      out << "   " << to_string(r.precision) << "  " << r.format << " " << describe(r.candidate)
          << ": " << to_string(r.status) << ": " << r.message << "\n";
}

void print_summary(std::ostream& out, const BenchReport& report) {
  char line[256];
  std::snprintf(line, sizeof line, "\nbest per matrix (copy bandwidth %.1f GB/s on %s)\n",
                report.copy.gb_per_s, report.device.name.c_str());
  out << line;
  std::snprintf(line, sizeof line, "  %-26s", "matrix");
  out << line;
  for (const auto precision : report.options.precisions) {
    std::snprintf(line, sizeof line, " | %-4s %-16s %9s %5s %6s", std::string(to_string(precision)).c_str(),
                  "format", "time_ms", "%copy", "vsALG1");
    out << line;
  }
  out << " | sweep_s\n";
  for (const auto& m : report.matrices) {
    const std::string label = m.input.label + (m.input.derived() ? "*" : "");
    std::snprintf(line, sizeof line, "  %-26s", label.substr(0, 26).c_str());
    out << line;
    for (const auto precision : report.options.precisions) {
      const CandidateResult* best = nullptr;
      for (const auto& r : m.sweep.candidates)
        if (r.precision == precision && r.correct() && (!best || r.median_ms < best->median_ms)) best = &r;
      if (best)
        std::snprintf(line, sizeof line, " |      %-16s %9.4f %4.0f%% %6s", best->format.substr(0, 16).c_str(),
                      best->median_ms, 100.0 * best->fraction_of_copy_bandwidth,
                      ratio_text(best->speedup_vs_cusparse_alg1).c_str());
      else
        std::snprintf(line, sizeof line, " |      %-16s %9s %5s %6s", "(none correct)", "-", "-", "-");
      out << line;
    }
    std::snprintf(line, sizeof line, " | %7.1f\n", m.sweep_s);
    out << line;
  }
  out << "  * derived: a real matrix replicated block-diagonally. vsALG1 = cuSPARSE CSR ALG1 time / "
         "this time (> 1: faster); JSON/CSV hold every candidate and the best-cuSPARSE ratio.\n";
  for (const auto& label : report.skipped) out << "  skipped (time budget spent): " << label << "\n";
  std::snprintf(line, sizeof line, "total wall clock %.1f s\n", report.total_s);
  out << line;
}

}  // namespace spmvd
