// Log-linear interpolation on the profile tables' axes: nodes, midpoints in log space, clamping and
// one-point axes, the same for the FP8 speedup table and the attention speed curves that use it.
#include <catch2/catch.hpp>

#include "costmodel/log_interp.h"

using namespace meshplan;

TEST_CASE("log_bracket: nodes, log midpoints and clamps", "[costmodel][interp]") {
  const std::vector<double> axis{1, 100, 10000};
  CHECK(log_bracket(axis, 10).i == 0);
  CHECK(log_bracket(axis, 10).w == Approx(0.5));      // halfway between 1 and 100 in log space
  CHECK(log_bracket(axis, 100).i == 0);               // a node ends its bracket at weight 1
  CHECK(log_bracket(axis, 100).w == Approx(1.0));
  CHECK(log_bracket(axis, 1000).i == 1);
  CHECK(log_bracket(axis, 1000).w == Approx(0.5));
  CHECK(log_bracket(axis, 0.5).i == 0);               // below: the first point
  CHECK(log_bracket(axis, 0.5).w == 0.0);
  CHECK(log_bracket(axis, 1e9).i == 1);               // above: the last point
  CHECK(log_bracket(axis, 1e9).w == 1.0);
  CHECK(log_bracket({42}, 7).i == 0);
  CHECK(log_bracket({42}, 7).w == 0.0);
}

TEST_CASE("log_interpolate: values between, at and beyond the points", "[costmodel][interp]") {
  const std::vector<double> seq{512, 2048, 8192}, tflops{100, 200, 260};
  CHECK(log_interpolate(seq, tflops, 1024) == Approx(150));  // 1024 is halfway 512..2048 in log
  CHECK(log_interpolate(seq, tflops, 2048) == Approx(200));
  CHECK(log_interpolate(seq, tflops, 4096) == Approx(230));
  CHECK(log_interpolate(seq, tflops, 64) == 100);
  CHECK(log_interpolate(seq, tflops, 65536) == 260);
  CHECK(log_interpolate({2048}, {300}, 16) == 300);
}
