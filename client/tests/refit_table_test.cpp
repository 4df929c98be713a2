#include "client/refit_table.hpp"

#include <gtest/gtest.h>

namespace spmvd {
namespace {

TEST(RefitTables, ShowsEachFormatBeforeAndAfterTheTop1AndTheVerdict) {
  v1::RefitModelsReply reply;
  reply.set_device("gpu|H100|cc9.0");
  v1::PrecisionRefit& fp64 = *reply.add_precisions();
  fp64.set_precision(v1::FP64);
  fp64.set_stored_samples(42);
  fp64.set_skipped_samples(2);
  fp64.set_fit_samples(20);
  fp64.set_heldout_samples(20);
  v1::RefitFormatAccuracy& csr = *fp64.add_formats();
  csr.set_format_name("cusparse_csr");
  csr.set_heldout_samples(20);
  csr.set_median_relative_error_before(0.5);
  csr.set_median_relative_error_after(0.025);
  csr.set_factor_before(1.0);
  csr.set_factor_after(2.0);
  fp64.set_median_relative_error_before(0.5);
  fp64.set_median_relative_error_after(0.025);
  fp64.set_top1_tunings(10);
  fp64.set_top1_agreement_before(0.3);
  fp64.set_top1_agreement_after(0.9);
  fp64.set_accepted(true);
  fp64.set_installed(true);
  v1::PrecisionRefit& fp32 = *reply.add_precisions();
  fp32.set_precision(v1::FP32);
  fp32.set_refusal("too few samples to hold any out");

  const std::string text = refit_tables(reply);
  EXPECT_NE(text.find("fp64: 42 stored samples (2 not re-predictable)"), std::string::npos) << text;
  EXPECT_NE(
      text.find("cusparse_csr                  20          50.0 %     2.5 %     1.000     2.000"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("top-1 agreement on 10 held-out tunings: 30.0 % -> 90.0 %"),
            std::string::npos);
  EXPECT_NE(text.find("accepted: the new factors are stored and in use"), std::string::npos);
  EXPECT_NE(text.find("refused: too few samples to hold any out"), std::string::npos);
}

}  // namespace
}  // namespace spmvd
