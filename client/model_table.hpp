#pragma once
// `spmvctl model show` for people: a model set's summary (models/model_set.hpp,
// model_set_summary) as one aligned table per format family.

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace spmvd {

// Format id -> name, as the daemon's ListFormats reports them; an id missing here prints as
// "format <id>".
using FormatNames = std::map<int, std::string>;

// A heading for the summary's precision, model version and device signature, then per family
// in the order csr_vector, ell, coo, bytes, format_bytes, cache_resident (then any other family
// in the order met) one table with a row per fit: its variant, curve, main coefficients in
// readable units (intercepts in µs, slopes in µs per x unit or ns per non-zero, bandwidths in
// GB/s), its sample count and its RMS and max relative error on the calibration's own samples,
// in %. Grids (ell, cache_resident) are summarised by their axes' ranges and the range of their
// values. Then the paper 000 / 003 coefficients where present. Fields missing from a fit print
// as "-". Pure; O(size of the summary).
std::string model_tables(const nlohmann::json& summary, const FormatNames& format_names = {});

}  // namespace spmvd
