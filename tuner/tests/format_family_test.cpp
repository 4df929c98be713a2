#include "tuner/format_family.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kernels/format_registry.hpp"

namespace spmvd {
namespace {

TEST(FormatFamily, ListsEveryRegisteredFormat) {
  ASSERT_FALSE(format_registry().entries().empty());
  for (const FormatEntry& entry : format_registry().entries()) {
    EXPECT_TRUE(listed_model_family(entry.rules->id()).has_value())
        << entry.rules->name() << " (id " << entry.rules->id().value
        << ") has no model family: add it to tuner/format_family.cpp";
  }
}

// The CPU-only build registers only the CPU formats, so the catalogue's ids are checked too.
TEST(FormatFamily, MapsTheCatalogueToTheModelsCalibratedForIt) {
  const auto family = [](std::uint16_t id) { return listed_model_family(FormatId{id}); };
  EXPECT_EQ(family(1), ModelFamily::other);       // cpu_csr: bytes model
  EXPECT_EQ(family(2), ModelFamily::csr_vector);  // cuda_csr_vector
  EXPECT_EQ(family(3), ModelFamily::other);       // cusparse_csr
  EXPECT_EQ(family(4), ModelFamily::csr_vector);  // cuda_csr_scalar: the 1-lane variant
  EXPECT_EQ(family(5), ModelFamily::ell);         // cuda_ell
  EXPECT_EQ(family(6), ModelFamily::coo);         // cuda_coo
  EXPECT_EQ(family(7), ModelFamily::hyb);         // cuda_hyb
  EXPECT_EQ(family(8), ModelFamily::other);       // cuda_sell
  EXPECT_EQ(family(9), ModelFamily::other);       // cusparse_coo
  EXPECT_EQ(family(10), ModelFamily::other);      // cusparse_sell
  EXPECT_EQ(family(11), ModelFamily::other);      // cusparse_bsr
  EXPECT_EQ(family(12), ModelFamily::coo);        // cpu_coo
}

TEST(FormatFamily, UnlistedFormatsFallBackToTheBytesModel) {
  EXPECT_FALSE(listed_model_family(FormatId{60000}).has_value());
  EXPECT_EQ(model_family(FormatId{60000}), ModelFamily::other);
}

}  // namespace
}  // namespace spmvd
