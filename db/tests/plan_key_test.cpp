#include "db/plan_key.hpp"

#include <gtest/gtest.h>

namespace spmvd {
namespace {

TEST(PlanKey, FingerprintHexRoundTrips) {
  const Fingerprint fingerprint{.high = 0x0123456789abcdefULL, .low = 0xfedcba9876543210ULL};
  ASSERT_EQ(fingerprint.hex(), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(fingerprint_from_hex(fingerprint.hex()), fingerprint);
  EXPECT_EQ(fingerprint_from_hex(Fingerprint{}.hex()), Fingerprint{});
}

TEST(PlanKey, MalformedFingerprintHexIsRejected) {
  EXPECT_EQ(fingerprint_from_hex(""), std::nullopt);
  EXPECT_EQ(fingerprint_from_hex("0123456789abcdeffedcba987654321"), std::nullopt);    // 31
  EXPECT_EQ(fingerprint_from_hex("0123456789abcdeffedcba98765432100"), std::nullopt);  // 33
  EXPECT_EQ(fingerprint_from_hex("0123456789ABCDEFFEDCBA9876543210"), std::nullopt);   // upper
  EXPECT_EQ(fingerprint_from_hex("0123456789abcdeffedcba987654321g"), std::nullopt);
}

TEST(PlanKey, ToStringNamesEveryComponent) {
  const PlanKey key{Fingerprint{.high = 1, .low = 2}, "gpu|H100", Precision::fp32, 4, 12};
  EXPECT_EQ(to_string(key),
            "fingerprint=00000000000000010000000000000002 device='gpu|H100' precision=fp32 "
            "tuner_version=4 model_version=12");
}

}  // namespace
}  // namespace spmvd
