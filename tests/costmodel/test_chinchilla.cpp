// Chinchilla allocations (20 tokens/parameter and Approach 3) and training days.
#include <catch2/catch.hpp>

#include <cmath>

#include "costmodel/chinchilla.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("20 tokens/parameter for 1e21 FLOPs: N = sqrt(1e21/120) = 2.89e9, D = 5.77e10 (seed)") {
  const Allocation a = allocation_tokens_per_parameter(1e21);
  CHECK(a.parameters == Approx(std::sqrt(1e21 / 120.0)));
  CHECK(a.parameters == Approx(2.89e9).epsilon(2e-3));
  CHECK(a.tokens == Approx(5.77e10).epsilon(2e-3));
  CHECK(a.flops == Approx(1e21));
}

TEST_CASE("Approach 3 allocation minimises the fitted loss on the 6ND budget") {
  const ChinchillaLaw law;
  for (double C : {1e20, 5.76e23, 1e25}) {
    const Allocation a = allocation_approach3(C, law);
    CHECK(a.flops == Approx(C));
    for (double k : {0.8, 0.95, 1.05, 1.25}) {
      const double n = a.parameters * k;
      CHECK(chinchilla_loss(law, n, C / (6 * n)) > a.loss);
    }
  }
}

TEST_CASE("Approach 3 closed form equals a brute-force search over N (reference)") {
  const ChinchillaLaw law;
  const double C = 5.76e23;  // Chinchilla's budget
  double best_n = 0, best_loss = 1e30;
  for (double logn = 9.0; logn <= 12.0; logn += 1e-5) {
    const double n = std::pow(10.0, logn);
    const double loss = chinchilla_loss(law, n, C / (6 * n));
    if (loss < best_loss) { best_loss = loss; best_n = n; }
  }
  const Allocation a = allocation_approach3(C, law);
  CHECK(a.parameters == Approx(best_n).epsilon(1e-4));
  CHECK(a.loss == Approx(best_loss).epsilon(1e-9));
  // With the published (rounded) coefficients this is 32.2B parameters on 2.98T tokens.
  CHECK(a.parameters == Approx(32.19e9).epsilon(1e-3));
}

TEST_CASE("training days and cluster FLOPs are inverses") {
  // 8.4e23 FLOPs on 2048 A100s (312 TFLOP/s) at 50 % MFU: 30.4 days.
  const double days = training_days(8.4e23, 2048, 312e12, 0.5);
  CHECK(days == Approx(8.4e23 / (2048 * 312e12 * 0.5) / 86400));
  CHECK(cluster_flops(2048, 312e12, days, 0.5) == Approx(8.4e23));
}
