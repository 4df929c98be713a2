// FieldSet: a struct's fields by name (FieldSet::of) and back (as), kept sorted by name, with
// the messages a stored plan of another shape meets, and its printing.

#include "core/field_set.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"

namespace spmvd {
namespace {

using ::testing::ElementsAre;

// Every kind of member a FieldSet holds, declared out of name order.
struct EveryKind {
  std::uint32_t width = 0;
  std::int32_t offset = 0;
  std::int64_t big = 0;
  double ratio = 0.0;
  std::vector<std::int32_t> boundaries;
  std::vector<double> thresholds;
  static constexpr auto kFields = std::tuple{declare_field("width", &EveryKind::width),
                                             declare_field("offset", &EveryKind::offset),
                                             declare_field("big", &EveryKind::big),
                                             declare_field("ratio", &EveryKind::ratio),
                                             declare_field("boundaries", &EveryKind::boundaries),
                                             declare_field("thresholds", &EveryKind::thresholds)};
  friend bool operator==(const EveryKind&, const EveryKind&) = default;
};

struct Narrow {
  std::uint8_t bits = 0;
  std::vector<std::uint16_t> widths;
  static constexpr auto kFields =
      std::tuple{declare_field("bits", &Narrow::bits), declare_field("widths", &Narrow::widths)};
};

struct NoFields {
  static constexpr auto kFields = std::tuple{};
};

EveryKind every_kind() {
  return EveryKind{.width = 4'000'000'000U,
                   .offset = -7,
                   .big = (std::int64_t{1} << 40) + 3,
                   .ratio = 1.0 / 3.0,
                   .boundaries = {0, 5, -2},
                   .thresholds = {0.25, 1e-300}};
}

// The message of the Error(invalid_argument) that `read` throws ("" when it does not).
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    return e.what();
  }
  return "";
}

TEST(FieldSet, OfAndAsRoundTripEveryKindOfField) {
  const FieldSet set = FieldSet::of(every_kind());
  EXPECT_EQ(set.as<EveryKind>("test"), every_kind());
  EXPECT_EQ(set.fields().size(), 6U);
}

TEST(FieldSet, HoldsIntegersAsInt64AndListsAsLists) {
  const FieldSet set = FieldSet::of(every_kind());
  ASSERT_NE(set.find("width"), nullptr);
  EXPECT_EQ(set.find("width")->value, FieldValue{std::int64_t{4'000'000'000}});
  EXPECT_EQ(set.find("ratio")->value, FieldValue{1.0 / 3.0});
  EXPECT_EQ(set.find("boundaries")->value, (FieldValue{std::vector<std::int64_t>{0, 5, -2}}));
  EXPECT_EQ(set.find("thresholds")->value, (FieldValue{std::vector<double>{0.25, 1e-300}}));
  EXPECT_EQ(set.find("height"), nullptr);
}

TEST(FieldSet, KeepsFieldsSortedByNameSoSetsBuiltInAnyOrderAreEqual) {
  const FieldSet set = FieldSet::of(every_kind());
  std::vector<std::string> names;
  for (const NamedField& field : set.fields()) names.push_back(field.name);
  EXPECT_THAT(names, ElementsAre("big", "boundaries", "offset", "ratio", "thresholds", "width"));

  const FieldSet forwards({{"a", std::int64_t{1}}, {"b", 2.0}});
  const FieldSet backwards({{"b", 2.0}, {"a", std::int64_t{1}}});
  EXPECT_EQ(forwards, backwards);
  EXPECT_NE(forwards, FieldSet({{"a", std::int64_t{1}}, {"b", 3.0}}));
  EXPECT_NE(forwards, FieldSet({{"a", 1.0}, {"b", 2.0}}));  // another kind of value
  EXPECT_NE(forwards, FieldSet({{"a", std::int64_t{1}}}));
}

TEST(FieldSet, OfAStructWithoutFieldsIsTheEmptySet) {
  EXPECT_TRUE(FieldSet::of(NoFields{}).empty());
  EXPECT_EQ(FieldSet::of(NoFields{}), FieldSet{});
  EXPECT_FALSE(FieldSet::of(every_kind()).empty());
}

TEST(FieldSet, RefusesAnEmptyOrRepeatedName) {
  EXPECT_EQ(error_of([] {
              static_cast<void>(FieldSet({{"", std::int64_t{1}}}));
            }),
            "field set: a field has no name");
  EXPECT_EQ(error_of([] {
              static_cast<void>(FieldSet({{"a", std::int64_t{1}}, {"b", 1.0}, {"a", 2.0}}));
            }),
            "field set: field 'a' appears twice");
}

TEST(FieldSet, AsNamesAMissingField) {
  const FieldSet set({{"bits", std::int64_t{3}}});
  EXPECT_EQ(error_of([&] { set.as<Narrow>("cuda_sell"); }), "cuda_sell: field 'widths' is missing");
}

TEST(FieldSet, AsNamesAFieldTheStructDoesNotDeclare) {
  FieldSet set({{"bits", std::int64_t{3}},
                {"widths", std::vector<std::int64_t>{1}},
                {"cluster_size", std::int64_t{2}}});
  EXPECT_EQ(error_of([&] { set.as<Narrow>("cuda_sell"); }),
            "cuda_sell: field 'cluster_size' is not one of its fields");
  // Another struct's set: the first field it lacks is named.
  EXPECT_EQ(error_of([] { FieldSet::of(every_kind()).as<Narrow>("cusparse_bsr"); }),
            "cusparse_bsr: field 'bits' is missing");
}

TEST(FieldSet, AsNamesAValueOutsideTheMembersRange) {
  const auto narrow = [](FieldValue bits, FieldValue widths) {
    return FieldSet({{"bits", std::move(bits)}, {"widths", std::move(widths)}});
  };
  const std::vector<std::int64_t> fine{1, 65535};
  EXPECT_EQ(static_cast<int>(narrow(std::int64_t{255}, fine).as<Narrow>("x").bits), 255);
  EXPECT_EQ(error_of([&] { narrow(std::int64_t{256}, fine).as<Narrow>("x"); }),
            "x: field 'bits' value 256 is out of its range");
  EXPECT_EQ(error_of([&] { narrow(std::int64_t{-1}, fine).as<Narrow>("x"); }),
            "x: field 'bits' value -1 is out of its range");
  EXPECT_EQ(error_of([&] {
              narrow(std::int64_t{1}, std::vector<std::int64_t>{1, 65536}).as<Narrow>("x");
            }),
            "x: field 'widths' value 65536 is out of its range");
  std::vector<NamedField> fields = FieldSet::of(every_kind()).fields();
  for (NamedField& field : fields)
    if (field.name == "offset") field.value = std::int64_t{1} << 31;
  EXPECT_EQ(error_of([&] { FieldSet(fields).as<EveryKind>("x"); }),
            "x: field 'offset' value 2147483648 is out of its range");
}

TEST(FieldSet, AsNamesAValueOfAnotherKind) {
  const auto with = [](const char* name, FieldValue value) {
    std::vector<NamedField> fields = FieldSet::of(every_kind()).fields();
    for (NamedField& field : fields)
      if (field.name == name) field.value = std::move(value);
    return FieldSet(std::move(fields));
  };
  EXPECT_EQ(error_of([&] { with("width", 2.5).as<EveryKind>("x"); }),
            "x: field 'width' is not an integer");
  EXPECT_EQ(error_of([&] { with("ratio", std::vector<double>{1.0}).as<EveryKind>("x"); }),
            "x: field 'ratio' is not a number");
  EXPECT_EQ(error_of([&] { with("boundaries", std::vector<double>{1.5}).as<EveryKind>("x"); }),
            "x: field 'boundaries' is not a list of integers");
  EXPECT_EQ(error_of([&] { with("thresholds", 0.5).as<EveryKind>("x"); }),
            "x: field 'thresholds' is not a list of numbers");
  // Integers where numbers are expected read as numbers (JSON writes 2 for 2.0 in some tools).
  EXPECT_EQ(with("ratio", std::int64_t{2}).as<EveryKind>("x").ratio, 2.0);
  EXPECT_THAT(with("thresholds", std::vector<std::int64_t>{1, 2}).as<EveryKind>("x").thresholds,
              ElementsAre(1.0, 2.0));
}

TEST(FieldSet, PrintsFieldsSortedByNameAndADashWhenEmpty) {
  EXPECT_EQ(to_string(FieldSet{}), "-");
  const FieldSet sell({{"sort_window", std::int64_t{256}}, {"slice_height", std::int64_t{32}}});
  EXPECT_EQ(to_string(sell), "slice_height=32 sort_window=256");
  EXPECT_EQ(to_string(FieldSet({{"ratio", 0.25},
                                {"bounds", std::vector<std::int64_t>{1, 2, 3}},
                                {"none", std::vector<double>{}}})),
            "bounds=[1,2,3] none=[] ratio=0.25");
  std::ostringstream os;
  os << sell;
  EXPECT_EQ(os.str(), to_string(sell));
}

TEST(FieldSet, PrintsTheFirstEightEntriesOfALongList) {
  std::vector<std::int64_t> rows(10);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);
  EXPECT_EQ(to_string(FieldSet({{"rows", rows}})), "rows=[0,1,2,3,4,5,6,7,... 10 in all]");
}

}  // namespace
}  // namespace spmvd
