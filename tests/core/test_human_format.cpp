// Numbers for people (core/human_format.h): suffixes, rounding at the boundaries, units.
#include <catch2/catch.hpp>

#include <limits>

#include "core/human_format.h"

using namespace meshplan;

TEST_CASE("human_count: K/M/B/T with 3 significant digits") {
  CHECK(human_count(229952) == "230K");
  CHECK(human_count(2.88675e9) == "2.89B");
  CHECK(human_count(1.2e12) == "1.2T");
  CHECK(human_count(1e12) == "1T");
  CHECK(human_count(512) == "512");
  CHECK(human_count(0.25) == "0.25");
  CHECK(human_count(0) == "0");
  CHECK(human_count(999999) == "1M");  // rounds up into the next suffix, never "1e+03K"
  CHECK(human_count(999.7) == "1K");
  CHECK(human_count(-4.5e6) == "-4.5M");
  CHECK(human_count(6.74e9, "params") == "6.74B params");
  CHECK(human_count(std::numeric_limits<double>::infinity(), "tokens") == "inf tokens");
}

TEST_CASE("human_scientific: short exponents, plain numbers stay plain") {
  CHECK(human_scientific(8.4e23) == "8.4e23");
  CHECK(human_scientific(1e21) == "1e21");
  CHECK(human_scientific(1.234e-7) == "1.23e-7");
  CHECK(human_scientific(42) == "42");
}

TEST_CASE("human_seconds and human_bytes pick the unit") {
  CHECK(human_seconds(1.234) == "1.23 s");
  CHECK(human_seconds(0.0456) == "45.6 ms");
  CHECK(human_seconds(7.89e-4) == "789 us");
  CHECK(human_seconds(3 * 86400.0) == "3 days");
  CHECK(human_bytes(12.3e6) == "12.3 MB");
  CHECK(human_bytes(2.5e11) == "250 GB");
  CHECK(human_bytes(999.9e9) == "1 TB");
  CHECK(human_bytes(100) == "100 B");
}
