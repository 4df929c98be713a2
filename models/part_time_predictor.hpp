#pragma once
// The calibrated time of the parts of a composed format (kernels/format_parts.hpp): a GPU part
// by the ModelPredictor, as the format it runs as, at that format's own device bytes, its fixed
// cost (shared by the parts of one launch) the set's launch floor; a host
// part by the paper 003 CPU side of the set (its cpu_gpu record, Eq. 6 scaled by the host's
// x-locality factor at the part's x_gather_randomness) plus its PCIe bytes at the calibrated
// pinned copy bandwidth and kHostPartCopies per-copy latencies. A GPU part's row blocks take at
// least a calibrated time a wave of them (models/row_block_waves.hpp).
// ModelPredictor predicts a composed format through it, and the tuner hands it to the formats
// that choose their partition against the models (FormatRules::candidates_chosen_by).

#include <optional>
#include <span>

#include "core/device_info.hpp"
#include "kernels/format_parts.hpp"
#include "kernels/format_registry.hpp"
#include "models/model_predictor.hpp"

namespace spmvd {

class ModelPartTimePredictor final : public PartTimePredictor {
 public:
  // Keeps references: predictor, registry and device must outlive it. composition_footprint_bytes:
  // what the whole composed multiply keeps in L2 (ModelPredictor::predict_ms), where the parts
  // belong to one known matrix; without it each part is judged by its own bytes.
  ModelPartTimePredictor(const ModelPredictor& predictor, const FormatRegistry& registry,
                         const DeviceInfo& device,
                         std::optional<double> composition_footprint_bytes = std::nullopt)
      : predictor_(predictor),
        registry_(registry),
        device_(device),
        composition_footprint_bytes_(composition_footprint_bytes) {}
  // nullopt for a part of an unregistered format, a family or host side the set does not
  // calibrate, or a candidate the model says cannot launch.
  std::optional<double> part_ms(const FormatPart& part) const override;
  double fixed_ms(const FormatPart& part) const override;
  // A GPU part holds two things the parts of its launch share: the GPU's resident threads
  // (sm_count x max_threads_per_sm) and its memory bandwidth. It occupies the larger of ms x
  // its share of the threads (its candidate's grid_size x block_size over them) and its bytes
  // (its format's streamed bytes and the composition's, FormatPart::row_map_bytes and
  // scattered_row_runs) at the bytes family's shared rate, at most ms. ms for a host part,
  // where the device or the bytes fit does not say, or with the shared_launch_overlap step off.
  double occupied_ms(const FormatPart& part, double ms) const override;

 private:
  // The least time the part's row blocks take (FormatPart::row_blocks): the launch's fixed cost
  // and a wave time per wave of them (models/row_block_waves.hpp); 0 where it has none, the
  // set calibrates no wave time or the row_block_waves step is off.
  double row_block_waves_ms(const FormatPart& part) const;

  const ModelPredictor& predictor_;
  const FormatRegistry& registry_;
  const DeviceInfo& device_;
  std::optional<double> composition_footprint_bytes_;
};

// max(sum of the GPU parts, sum of the host parts) (kernels/format_parts.hpp). A shared launch
// counts once its fixed cost (the largest of its parts', or the composed format's own measured
// floor where that is larger: shared_launch_floor_ms, models/composed_launch_floors.hpp; 0:
// none) and above it the larger of its slowest part's part_ms_in_launch and the sum of every
// part's occupied_ms (the parts run side by side: correction_steps.cpp
// "shared_launch_overlap"). nullopt where a part cannot be predicted. Throws
// Error(invalid_argument) on no parts.
std::optional<double> composed_time_ms(std::span<const FormatPart> parts,
                                       const PartTimePredictor& predictor,
                                       double shared_launch_floor_ms = 0.0);

}  // namespace spmvd
