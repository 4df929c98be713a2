#pragma once
// Every fitted model of one device and precision: what calibration produces, the plan cache
// stores per device signature, and the tuner ranks candidates with (models/model_predictor.hpp).
// Each model family's record is the family's own type, held by name (models/family_record.hpp;
// the family's folder declares it, models/families/registry.cpp reads it back); the set holds
// beside them only what spans families.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "models/cache_resident.hpp"
#include "models/composed_launch_floors.hpp"
#include "models/family_record.hpp"
#include "models/host_build_rates.hpp"
#include "models/measured_refit.hpp"
#include "models/row_block_waves.hpp"

namespace spmvd {

// The form of the models: bump on any change of a fit, a calibration record, a field or what a
// model computes from them. Plans record the version that chose them; a stored model set of
// another version is refused and recalibrated.
// 18: a composed format's parts of one launch pay its fixed cost once; BCE's blocks carry the
// reordering's bytes (kernels/format_parts.hpp).
// 19: the BRO formats have format_bytes records of their own (timed with their own features,
// random and banded); a candidate without its own parameters' record takes the record sharing
// most of them.
// 20: the strip's ELL part is predicted at the slots its sorted rows' warps walk, and its parts
// pay for writing y through the sort (cuda_strip_rules.hpp); the host rate of paper 003's CPU
// side has a banded ratio (CpuGpuTimeCoefficients::cpu_banded_ratio) from wide random samples
// and banded twins, a touched row's own cost (cpu_ms_per_row) and the host path's round trip
// (host_round_trip_ms).
// 21: the bytes family counts what a multiply reads (FormatRules::streamed_bytes): unsorted
// SELL's padding only in the 32-byte sectors a running row shares (cuda_sell's sector_slots
// features), so cuda_sell and cusparse_sell plans and features of version 20 are re-made.
// 22: a bytes record timed with its own features is keyed by its lanes a row as well
// (FormatBytesCalibration::threads_per_row): BRO-ELL's 4-lane Hopper layout gets a record of its
// own.
// 23: the ELL kernels (cuda_ell, cuda_hyb's ELL part, cuda_sell, the split's GPU part) load four
// slots a row at a time (catalogue_detail::ell_row_sum): calibrations of version 22 timed the
// kernel that waited a memory latency a slot.
// 24: a bytes record timed with its own features (BRO) has the long-row steps too, timed with
// the longest row its layout is offered with: BRO-ELL's slice of the longest row decodes it
// serially (bytes_calibration.cpp own_features_variant).
// 25: cuda_bro_hyb is predicted as its two launches (CudaBroHybRules::parts: a BRO-ELL part, a
// BRO-COO part), each by its own format's records; it has no bytes records of its own.
// 26: the strip's parts gather x as the whole length-sorted order does (cuda_sell's sorted
// gathers), their spans no more local than those gathers (CudaStripRules::parts).
// 27: EHYB's kernels load four slots at a time (grouped_slot_sum); EHYB gets format_bytes
// records on bands renumbered at random and their banded twins (bytes_calibration.cpp
// structure_variant), and DIA's bands-only record the critical-path pair (with no long row):
// EHYB had no record and took the shared ALG1 fit.
// 28: the set holds each host-built format's build time a nonzero, timed by the calibration
// driver (host_build_ns_per_nonzero): the tuner's build estimate, one host rate before.
// 29: the ELL kernels and EHYB's load a width's last one to three slots together, not one at a
// time (grouped_slot_sum), and EHYB gathers its x slice four entries a thread at a time:
// calibrations of version 28 timed the slot-at-a-time tail. The set holds the launch floors of
// the composed formats that share one launch (composed_launch_floors: BCE's).
// 30: a host build rate is a rate a device byte too (HostBuildRate::ns_per_device_byte), and the
// composed formats built on the host have theirs (models/calibration/composed_formats_fit.hpp).
// 31: the cache_resident grid reaches 262144 rows where a sample fits in L2 (0.2-0.6M short
// rows in L2 measured 0.44-0.84 of their predictions), the cells beyond L2 clamped.
// 32: a bytes record's banded ratio is taken at equal bytes (banded_ratio_at_equal_bytes): BRO's
// banded twins pack their deltas into fewer bits, which the plain time ratio counted on top of
// the prediction's own fewer bytes. The ell family holds a launch above its longest row's
// one-lane walk (the latency stage's), which cuda_strip's ELL parts below long rows missed. A
// composed format's parts are judged in or beyond L2 by the whole composition's footprint.
// 33: EHYB's records are timed on bands of mixed row lengths (SampleShape::mixed_lengths), whose
// length sort scatters its y stores as a real matrix's does.
// 34: cuda_ehyb computes y in its own row order and gathers it back (a third launch): its
// records timed the stores through the permutation.
// 35: the cpu_gpu record's x_width_ratio (a host gather's cost by the width of x) and its
// round trip timed with spmv-bench's runs.
// 36: a BSR record's block_row_chain (in-L2 samples of 8 and 64 a row; the correction step
// bsr_block_row_chain).
// 37: the cpu_gpu round trip timed on a host part of a single entry, and a host part priced on
// as many threads as it has tasks (FormatPart::host_tasks).
// 38: the parts of a shared launch overlap (correction step shared_launch_overlap), and BCE's
// hopper blocks are priced as the one-lane rows their lanes walk, as wide as a warp walks.
// 39: beyond L2 a bytes-family candidate and a composed multiply take at least the launch floor
// and their DRAM bytes (FormatRules::dram_streamed_bytes: cuSPARSE SELL's every padded slot,
// cuSPARSE's bytes without its workspace bound) at the fastest rate the ell grid's banded
// samples streamed (correction step dram_rate). The calibration is version 38's.
// 40: the cpu_gpu record's round trip is the median of rounds timed in both precisions, and not
// less the sample's ELL kernel, which runs beside the host path, and it holds the wake-up a host
// part of several tasks pays (host_wake_ms; cpu_gpu_fit.cpp, time_host_path); BCE's launch
// floors are timed with launches that pass only the tile runs they have (bce_launch_runs);
// cuda_hyb's ELL kernel is priced at K = 0 too, where it runs to apply beta (hyb_model.cpp).
// 41: a part's CUDA blocks that each reduce one row (FormatPart::row_blocks: BCE's block-wide
// rows) take at least a calibrated wave time per wave of them (row_block_waves; correction step
// row_block_waves).
// 42: cuda_ell pays its random gathers' excess over the banded twin per non-zero, not per walked
// slot (EllModel::predict_walked_ms), and cuda_hyb's ELL part is priced as cuda_ell prices it (the
// walk of its rows cut to K); beyond L2 both take at least their walked bytes at the DRAM rate
// (correction step dram_rate; CudaEllRules and CudaHybRules::streamed_bytes); cuda_sell's
// windowed sorts store the slots its features count (CudaSellFeatures::sorted_slots_32 / _64),
// not a bound. The calibration is version 41's.
inline constexpr int kModelVersion = 42;

struct ModelSet {
  std::string device_signature;  // DeviceInfo::signature() of the calibrated device
  Precision precision = Precision::fp64;
  // Per model family its record (CsrVectorRecord, EllRecord, CooRecord, BytesRecord,
  // CpuGpuTimeCoefficients, ...: records.find<R>()); a family without one is not calibrated.
  FamilyRecords records;
  // Per calibrated variant, its measured / predicted time on cache-resident samples
  // (models/cache_resident.hpp); empty where the stage failed.
  std::vector<CacheResidentCorrection> cache_resident;
  // The least time any multiply takes on this device (launch and completion latency), measured
  // on a tiny calibration sample; every prediction is at least this. 0: not calibrated.
  double launch_floor_ms = 0.0;
  // Per format, the factor refitted from the tuner's measured samples (`spmvctl model refit`,
  // models/measured_refit.hpp); empty until a refit is accepted.
  std::vector<MeasuredRefitFactor> measured_refit;
  // Per format built on the host (FormatEntry::builds_on_device false) that calibration built,
  // its build time a nonzero on this machine (models/host_build_rates.hpp).
  std::vector<HostBuildRate> host_build_rates;
  // Per composed format whose parts share one launch (BCE), that launch's own floor
  // (models/composed_launch_floors.hpp); empty on a CPU device.
  std::vector<ComposedLaunchFloor> composed_launch_floors;
  // Per block size, one wave of CUDA blocks that each reduce a row (models/row_block_waves.hpp);
  // empty on a CPU device or where no format runs row blocks.
  std::vector<RowBlockWave> row_block_waves;
  friend bool operator==(const ModelSet&, const ModelSet&) = default;
};

// JSON text with "model_version" = kModelVersion, the cross-family fields, and "families": an
// object of each record's fields under its family's name.
std::string model_set_to_json(const ModelSet& set);

// Parses text written by model_set_to_json. Throws Error(failed_precondition) naming both values
// when its model_version is not kModelVersion, its device signature is not
// expected_device_signature or its precision is not expected_precision (checked in that order);
// Error(invalid_argument) naming the problem when the text is not a valid model set: a field
// missing or mistyped, a family this build does not register or one that keeps no record (named).
ModelSet model_set_from_json(const std::string& text, const std::string& expected_device_signature,
                             Precision expected_precision);

// For `spmvctl model show` (client/model_table.hpp): {"model_version", "device_signature",
// "precision",
//  "tables": [{"family", "name", "title", "headers": [...], "rows": [[cells...]...]}...]: what
//    people read, per family in registry order each record's tables_of, then the set's
//    "cache_resident", "launch_floor", "composed_floors", "row_block_waves", "measured_refit" and
//    "build_rates"
//    (family = name); only tables with rows,
//  "fits": [{"family", "variant": {"block_size", "threads_per_row", COO's "entries_per_thread"},
//    "curve", "kind", coefficients..., "quality": {"sample_count", "rms_relative_error",
//    "max_relative_error", "x_min", "x_max"}}...]: the numbers for scripts (`--json`), per
//    family in registry order (each family's add_to_summary), then cache_resident's,
//  "measured_refit" where refitted, and what coefficient records add under their family's name
//  ("cpu_gpu")}.
nlohmann::json model_set_summary(const ModelSet& set);

}  // namespace spmvd
