#include "tuner/host_build_history.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace spmvd {

void HostBuildHistory::record(FormatId format, double measured_over_estimated) {
  if (!(measured_over_estimated > 0.0) || !std::isfinite(measured_over_estimated)) return;
  const std::lock_guard lock(mutex_);
  std::deque<double>& ratios = ratios_[format];
  ratios.push_back(measured_over_estimated);
  if (ratios.size() > kMaxTunings) ratios.pop_front();
}

double HostBuildHistory::factor(FormatId format) const {
  std::vector<double> ratios;
  {
    const std::lock_guard lock(mutex_);
    const auto it = ratios_.find(format);
    if (it == ratios_.end()) return 1.0;
    ratios.assign(it->second.begin(), it->second.end());
  }
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  return n % 2 == 1 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
}

void HostBuildHistory::clear() {
  const std::lock_guard lock(mutex_);
  ratios_.clear();
}

}  // namespace spmvd
