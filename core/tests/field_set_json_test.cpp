// A FieldSet as a JSON object and back (a plan's params and format_features): every kind of
// value round-trips, and malformed input is refused naming the field.

#include "core/field_set_json.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"

namespace spmvd {
namespace {

using nlohmann::json;

struct SellLike {
  std::uint32_t slice_height = 0;
  std::vector<std::int64_t> sort_windows;
  std::vector<double> sorted_sectors_per_nonzero;
  static constexpr auto kFields = std::tuple{
      declare_field("slice_height", &SellLike::slice_height),
      declare_field("sort_windows", &SellLike::sort_windows),
      declare_field("sorted_sectors_per_nonzero", &SellLike::sorted_sectors_per_nonzero)};
  friend bool operator==(const SellLike&, const SellLike&) = default;
};

FieldSet every_kind() {
  return FieldSet(
      {{"count", std::int64_t{(std::int64_t{1} << 40) + 1}},
       {"offset", std::int64_t{-3}},
       {"ratio", 1.0 / 3.0},
       {"whole", 2.0},  // integral, still a double
       {"bounds", std::vector<std::int64_t>{0, -5, std::numeric_limits<std::int64_t>::max()}},
       {"weights", std::vector<double>{0.1, 1.0, 1e-300}}});
}

// The message of the Error(invalid_argument) that decoding `text` throws ("" when it does not).
std::string decode_error(const std::string& text) {
  try {
    field_set_from_json(json::parse(text), "plan JSON", "params");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    return e.what();
  }
  return "";
}

TEST(FieldSetJson, RoundTripKeepsEveryKindOfValue) {
  const FieldSet set = every_kind();
  const json j = field_set_to_json(set, "test");
  EXPECT_EQ(field_set_from_json(j, "test", "params"), set);
  // And through text, as the plan cache stores it.
  EXPECT_EQ(field_set_from_json(json::parse(j.dump()), "test", "params"), set);
}

TEST(FieldSetJson, WritesEachFieldAsAMemberOfItsOwnJsonType) {
  const json j = field_set_to_json(every_kind(), "test");
  EXPECT_EQ(j.size(), 6U);
  EXPECT_TRUE(j.at("count").is_number_integer());
  EXPECT_EQ(j.at("count"), (std::int64_t{1} << 40) + 1);
  EXPECT_EQ(j.at("offset"), -3);
  EXPECT_TRUE(j.at("whole").is_number_float());
  EXPECT_EQ(j.at("bounds"), json::parse("[0,-5,9223372036854775807]"));
  EXPECT_TRUE(j.at("weights")[1].is_number_float());
  EXPECT_EQ(field_set_to_json(FieldSet{}, "test"), json::object());
}

TEST(FieldSetJson, RoundTripsAFormatsStructThroughItsSet) {
  const SellLike sell{
      .slice_height = 32, .sort_windows = {256, 4096}, .sorted_sectors_per_nonzero = {0.5, 0.75}};
  const json j = field_set_to_json(FieldSet::of(sell), "cuda_sell");
  EXPECT_EQ(j, json::parse(R"({"slice_height":32,"sort_windows":[256,4096],)"
                           R"("sorted_sectors_per_nonzero":[0.5,0.75]})"));
  EXPECT_EQ(field_set_from_json(j, "test", "").as<SellLike>("cuda_sell"), sell);
}

// JSON does not tell an empty list of numbers from an empty list of integers: it reads back as
// integers, which a member of doubles still accepts.
TEST(FieldSetJson, AnEmptyListOfNumbersReadsBackIntoItsMember) {
  const SellLike one_row{.slice_height = 32, .sort_windows = {}, .sorted_sectors_per_nonzero = {}};
  const FieldSet read = field_set_from_json(field_set_to_json(FieldSet::of(one_row), "t"), "t", "");
  EXPECT_EQ(read.as<SellLike>("cuda_sell"), one_row);
}

TEST(FieldSetJson, ReadsAListOfIntegersAndNumbersAsNumbers) {
  const FieldSet set = field_set_from_json(json::parse(R"({"w":[1,0.5,2]})"), "t", "");
  EXPECT_EQ(set, FieldSet({{"w", std::vector<double>{1.0, 0.5, 2.0}}}));
}

TEST(FieldSetJson, RefusesANonObjectNamingItsPath) {
  EXPECT_EQ(decode_error("[1, 2]"), "plan JSON: field 'params' has type array, expected object");
  EXPECT_EQ(decode_error("7"), "plan JSON: field 'params' has type number, expected object");
}

TEST(FieldSetJson, RefusesAMemberThatIsNotANumberOrAListOfNumbers) {
  EXPECT_EQ(decode_error(R"({"slice_height":"32"})"),
            "plan JSON: field 'params.slice_height' has type string, expected a number or an "
            "array of numbers");
  EXPECT_EQ(decode_error(R"({"flag":true})"),
            "plan JSON: field 'params.flag' has type boolean, expected a number or an array of "
            "numbers");
  EXPECT_EQ(decode_error(R"({"nested":{"a":1}})"),
            "plan JSON: field 'params.nested' has type object, expected a number or an array of "
            "numbers");
  EXPECT_EQ(decode_error(R"({"bounds":[1,[2],3]})"),
            "plan JSON: field 'params.bounds[1]' has type array, expected number");
  EXPECT_EQ(decode_error(R"({"bounds":[1,2,null]})"),
            "plan JSON: field 'params.bounds[2]' has type null, expected number");
}

TEST(FieldSetJson, RefusesIntegersBeyondTheInt64Range) {
  EXPECT_EQ(decode_error(R"({"count":9223372036854775808})"),
            "plan JSON: field 'params.count' exceeds the int64 range");
  EXPECT_EQ(decode_error(R"({"bounds":[1,9223372036854775808]})"),
            "plan JSON: field 'params.bounds[1]' exceeds the int64 range");
  EXPECT_EQ(decode_error(R"({"count":9223372036854775807})"), "");
  EXPECT_EQ(decode_error(R"({"count":-9223372036854775808})"), "");
}

TEST(FieldSetJson, NamesTheFieldWithoutAPathAtTheTop) {
  try {
    field_set_from_json(json::parse(R"({"w":"x"})"), "calibration", "");
    FAIL() << "decoded a string";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "calibration: field 'w' has type string, expected a number or an array of numbers");
  }
}

TEST(FieldSetJson, RefusesNonFiniteNumbersWhenWriting) {
  try {
    field_set_to_json(FieldSet({{"ratio", std::numeric_limits<double>::infinity()}}), "params");
    FAIL() << "wrote an infinity";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "params: field 'ratio' is inf, expected a finite number");
  }
  try {
    field_set_to_json(
        FieldSet({{"w", std::vector<double>{0.5, std::numeric_limits<double>::quiet_NaN()}}}),
        "params");
    FAIL() << "wrote a NaN";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "params: field 'w' is nan, expected a finite number");
  }
}

}  // namespace
}  // namespace spmvd
