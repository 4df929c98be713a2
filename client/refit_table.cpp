#include "client/refit_table.hpp"

#include <iomanip>
#include <sstream>

namespace spmvd {
namespace {

const char* precision_text(v1::Precision p) {
  return p == v1::FP32 ? "fp32" : p == v1::FP64 ? "fp64" : "unknown";
}

std::string percent(double share) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << 100.0 * share << " %";
  return out.str();
}

}  // namespace

std::string refit_tables(const v1::RefitModelsReply& reply) {
  std::ostringstream out;
  out << "device: " << reply.device() << "\n";
  for (const v1::PrecisionRefit& p : reply.precisions()) {
    out << "\n"
        << precision_text(p.precision()) << ": " << p.stored_samples() << " stored samples ("
        << p.skipped_samples() << " not re-predictable); fitted on the older " << p.fit_samples()
        << ", accuracy on the newer " << p.heldout_samples() << "\n";
    out << std::left << std::setw(22) << "format" << std::right << std::setw(10) << "held out"
        << std::setw(16) << "median error" << std::setw(10) << "after" << std::setw(10) << "factor"
        << std::setw(10) << "after"
        << "\n";
    out << std::fixed;
    for (const v1::RefitFormatAccuracy& f : p.formats()) {
      out << std::left << std::setw(22) << f.format_name() << std::right << std::setw(10)
          << f.heldout_samples() << std::setw(16) << percent(f.median_relative_error_before())
          << std::setw(10) << percent(f.median_relative_error_after()) << std::setw(10)
          << std::setprecision(3) << f.factor_before() << std::setw(10) << f.factor_after() << "\n";
    }
    out << std::left << std::setw(22) << "all" << std::right << std::setw(10) << p.heldout_samples()
        << std::setw(16) << percent(p.median_relative_error_before()) << std::setw(10)
        << percent(p.median_relative_error_after()) << "\n";
    out << "top-1 agreement on " << p.top1_tunings()
        << " held-out tunings: " << percent(p.top1_agreement_before()) << " -> "
        << percent(p.top1_agreement_after()) << "\n";
    if (p.installed())
      out << "accepted: the new factors are stored and in use\n";
    else if (p.accepted())
      out << "accepted but not installed\n";
    else
      out << "refused: " << p.refusal() << "\n";
  }
  return out.str();
}

}  // namespace spmvd
