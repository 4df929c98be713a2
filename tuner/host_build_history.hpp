#pragma once
// What this daemon's host builds took against the calibration's estimate of them, per format,
// so that its later tunings budget them as they run here. Why: the calibration times each
// host-built format's build once, on one sample, in its own process (models/host_build_rates.hpp);
// the daemon's builds of the same formats took a median 1.6x that estimate (BRO-HYB), 2.6x
// (BCE), 3.7x (the CPU-GPU split) and 5.4x (the strip) on 20 matrices it had not seen, and the
// first such build of a tuning, which nothing in the tuning had yet measured, ran auto tunings
// to 1.24-1.27x their budget (H100, 2026-12-07, docs/TUNER.md "Evaluation").
// Each tuning records, per host-built format it built, its slowest build over the estimate (the
// one that paid for the layout: a later candidate of the same layout may find parts of it in
// the build source's cache and say nothing of the rate); a format's factor is the median of its
// last kMaxTunings such ratios, 1 before any. Kept for the daemon's lifetime (a restart starts
// again from the calibration's rates). Thread-safe: tunings of several matrices run side by side.

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>

#include "core/format_id.hpp"

namespace spmvd {

class HostBuildHistory {
 public:
  static constexpr std::size_t kMaxTunings = 32;

  // One tuning's slowest build of `format` over its estimate; ignored unless positive and finite.
  void record(FormatId format, double measured_over_estimated);
  // The median of the format's recorded ratios (the older dropped past kMaxTunings); 1 where
  // none was recorded.
  double factor(FormatId format) const;
  // Forgets every ratio (the estimates they were taken against changed).
  void clear();

 private:
  mutable std::mutex mutex_;
  std::map<FormatId, std::deque<double>> ratios_;
};

}  // namespace spmvd
