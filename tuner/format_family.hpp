#pragma once
// Which performance model ranks each registered format (models/model_predictor.hpp), by the
// format's stable id. A format without a dedicated model is `other`: the bytes model ranks it.

#include <optional>

#include "core/format_id.hpp"
#include "models/model_predictor.hpp"

namespace spmvd {

// The family listed for `format`; nullopt for an id this table does not know. A test checks
// that every entry of the registry is listed, so a new format must add its line here.
std::optional<ModelFamily> listed_model_family(FormatId format) noexcept;

// listed_model_family, or `other` (the bytes model, always a sound fallback) for an unlisted id.
ModelFamily model_family(FormatId format) noexcept;

}  // namespace spmvd
