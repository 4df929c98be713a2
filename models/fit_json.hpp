#pragma once
// JSON of fits and calibration records (nlohmann ADL hooks), one field list per type. Readers
// throw nlohmann::json exceptions on a missing or mistyped field; model_set_from_json turns
// them into Error(invalid_argument).

#include <nlohmann/json.hpp>

#include "models/blocked_ell_time_model.hpp"
#include "models/families/bytes/bytes_model.hpp"
#include "models/cache_resident.hpp"
#include "models/families/coo/coo_model.hpp"
#include "models/cpu_gpu_time_model.hpp"
#include "models/families/csr_vector/csr_vector_model.hpp"
#include "models/families/ell/ell_model.hpp"
#include "models/fitting.hpp"
#include "models/occupancy.hpp"
#include "models/performance_model.hpp"

namespace spmvd {

// [x, y]; records read without "samples" get none (they are only drawn, never predicted from).
void to_json(nlohmann::json& j, const SamplePoint& v);
void from_json(const nlohmann::json& j, SamplePoint& v);
void to_json(nlohmann::json& j, const FitQuality& v);
void from_json(const nlohmann::json& j, FitQuality& v);
void to_json(nlohmann::json& j, const LinearFit& v);
void from_json(const nlohmann::json& j, LinearFit& v);
void to_json(nlohmann::json& j, const QuadraticFit& v);
void from_json(const nlohmann::json& j, QuadraticFit& v);
void to_json(nlohmann::json& j, const PiecewiseFit& v);
void from_json(const nlohmann::json& j, PiecewiseFit& v);
// Also checks that log_ms has widths x rows entries and both axes ascend.
void to_json(nlohmann::json& j, const LogGridFit& v);
void from_json(const nlohmann::json& j, LogGridFit& v);

void to_json(nlohmann::json& j, const KernelResources& v);
void from_json(const nlohmann::json& j, KernelResources& v);
void to_json(nlohmann::json& j, const CalibratedKernel& v);
void from_json(const nlohmann::json& j, CalibratedKernel& v);
void to_json(nlohmann::json& j, const CsrVectorCalibration& v);
void from_json(const nlohmann::json& j, CsrVectorCalibration& v);
void to_json(nlohmann::json& j, const EllCalibration& v);
void from_json(const nlohmann::json& j, EllCalibration& v);
void to_json(nlohmann::json& j, const CooCalibration& v);
void from_json(const nlohmann::json& j, CooCalibration& v);
void to_json(nlohmann::json& j, const BytesCalibration& v);
void from_json(const nlohmann::json& j, BytesCalibration& v);
void to_json(nlohmann::json& j, const FormatBytesCalibration& v);
void from_json(const nlohmann::json& j, FormatBytesCalibration& v);
void to_json(nlohmann::json& j, const CacheResidentCorrection& v);
void from_json(const nlohmann::json& j, CacheResidentCorrection& v);
void to_json(nlohmann::json& j, const BlockedEllTimeCoefficients& v);
void from_json(const nlohmann::json& j, BlockedEllTimeCoefficients& v);
void to_json(nlohmann::json& j, const CpuGpuTimeCoefficients& v);
void from_json(const nlohmann::json& j, CpuGpuTimeCoefficients& v);

}  // namespace spmvd
