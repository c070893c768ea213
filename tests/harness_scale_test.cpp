// `locklab scale`'s pieces without servers: the --clients list, the CPU share,
// and the table and picture rendered from synthetic points. (The sweep itself
// runs end to end in the ctest `locklab_scale_smoke`.)
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sweeps/scale.h"

namespace locklab::harness {
namespace {

TEST(ScaleClientCounts, ParsesSortsAndDeduplicates) {
  std::string why;
  const auto counts = parse_client_counts("8,1,2,8,64", &why);
  ASSERT_TRUE(counts) << why;
  EXPECT_EQ(*counts, (std::vector<int>{1, 2, 8, 64}));
}

TEST(ScaleClientCounts, RefusesWhatIsNotAClientCount) {
  for (const std::string bad : {"", "0", "1,,2", "two", "4,257", "1.5", "-3"}) {
    std::string why;
    EXPECT_FALSE(parse_client_counts(bad, &why)) << "'" << bad << "'";
    EXPECT_FALSE(why.empty()) << "'" << bad << "' refused without a reason";
  }
  std::string why;
  (void)parse_client_counts("4,257", &why);
  EXPECT_EQ(why, "must be between 1 and 256") << "the CLI adds the flag: never \"--clients: --clients: ...\"";
}

TEST(ScaleCpuShare, IsSecondsOverWallTimesCores) {
  CpuShare cpu;
  cpu.wall_s = 2.0;
  cpu.cores = 2;
  EXPECT_DOUBLE_EQ(cpu.percent(1.0), 25.0);
  cpu.wall_s = 0;
  EXPECT_DOUBLE_EQ(cpu.percent(1.0), 0.0) << "no wall time: no share, not a division by zero";
}

ScalePoint point(const std::string& lock, int clients, double per_s) {
  ScalePoint p;
  p.lock = lock;
  p.clients = clients;
  p.run = {{"verdict", "safe"},
           {"throughput", {{"acquisitions_per_s", per_s}}},
           {"fairness", {{"jain", 1.0}, {"max_wait_us", 12'000}}},
           {"totals", {{"abandoned", 3}}}};
  p.cpu.wall_s = 1;
  p.cpu.cores = 2;
  return p;
}

TEST(ScaleRendering, TableHasOneRowPerLockAndOneColumnPerClientCount) {
  const ScaleSweep sweep{{point("redlock", 8, 1000), point("redlock", 32, 700), point("fair-queue", 8, 800),
                          point("fair-queue", 32, 760)},
                         {}};
  const std::string md = scale_markdown(sweep);
  EXPECT_NE(md.find("| lock | 8 | 32 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| redlock | 1000 | 700 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fair-queue | 800 | 760 |"), std::string::npos) << md;
  EXPECT_NE(md.find("redlock: 32 clients keep 70 % of the 8-client throughput\n"), std::string::npos) << md;
  EXPECT_NE(md.find("fair-queue: 32 clients keep 95 % of the 8-client throughput\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("Serial limit"), std::string::npos) << "no round trip measured, no limit claimed";

  const std::string svg = scale_svg(sweep);
  std::size_t lines = 0;
  for (auto at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  EXPECT_EQ(lines, 2u) << "one line per generation";

  const auto document = scale_document(sweep);
  EXPECT_EQ(document["schema"], "locklab.scale/1");
  ASSERT_EQ(document["points"].size(), 4u);
  EXPECT_EQ(document["points"][0]["abandoned"], 3);
}

TEST(ScaleRendering, SerialLimitIsHoldPlusFourRoundTripsAndEachPointIsAShareOfIt) {
  const SerialLimit limit{35.0, 1.0};  // 1 / (1 ms + 4 x 35 us) = 877.2/s
  EXPECT_NEAR(limit.per_s(), 877.19, 0.01);
  EXPECT_EQ(SerialLimit{}.per_s(), 0) << "unmeasured";

  const ScaleSweep sweep{{point("fair-queue", 8, 800), point("fair-queue", 32, 790), point("fair-queue", 64, 789.5)},
                         limit};
  const std::string md = scale_markdown(sweep);
  EXPECT_NE(md.find("Serial limit: 1 / (hold 1 ms + 4 × 35.0 µs round trip) = 877 acquisitions/s"), std::string::npos)
      << md;
  EXPECT_NE(md.find("fair-queue: 32 clients keep 99 % of the 8-client throughput; of the serial limit: 91 % at 8 "
                    "clients, 90 % at 64"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| fair-queue | 64 | safe | 790 | 90 | 1.00 |"), std::string::npos) << md;
  EXPECT_NE(scale_svg(sweep).find("serial limit 877/s"), std::string::npos) << "the limit is drawn";

  const auto document = scale_document(sweep);
  EXPECT_NEAR(document["serial_limit"]["acquisitions_per_s"].get<double>(), 877.19, 0.01);
  EXPECT_NEAR(document["points"][2]["percent_of_serial_limit"].get<double>(), 90.0, 0.01);
}

}  // namespace
}  // namespace locklab::harness
