#include "models/families/cpu_gpu/cpu_gpu_record.hpp"

#include "models/fit_json.hpp"

namespace spmvd {

void add_to_summary(const CpuGpuTimeCoefficients& record, nlohmann::json& summary) {
  summary[std::string(CpuGpuTimeCoefficients::kFamily)] = record;
}

std::vector<NamedSvg> plots_of(const CpuGpuTimeCoefficients&, Precision) { return {}; }

}  // namespace spmvd
