// Chinchilla allocations and training-time arithmetic (costmodel/README.md "Chinchilla").
#include "costmodel/chinchilla.h"

#include <cmath>

#include "costmodel/flops.h"

namespace meshplan {

static constexpr double kSecondsPerDay = 86400.0;

Allocation allocation_tokens_per_parameter(double compute_flops, double r) {
  Allocation a;
  a.parameters = std::sqrt(compute_flops / (6.0 * r));
  a.tokens = r * a.parameters;
  a.flops = six_nd_flops(a.parameters, a.tokens);
  a.loss = chinchilla_loss(ChinchillaLaw{}, a.parameters, a.tokens);
  return a;
}

double chinchilla_loss(const ChinchillaLaw& law, double n, double d) {
  return law.E + law.A / std::pow(n, law.alpha) + law.B / std::pow(d, law.beta);
}

Allocation allocation_approach3(double compute_flops, const ChinchillaLaw& law) {
  const double sum = law.alpha + law.beta;
  const double G = std::pow(law.alpha * law.A / (law.beta * law.B), 1.0 / sum);
  const double c6 = compute_flops / 6.0;
  Allocation a;
  a.parameters = G * std::pow(c6, law.beta / sum);
  a.tokens = std::pow(c6, law.alpha / sum) / G;
  a.flops = six_nd_flops(a.parameters, a.tokens);
  a.loss = chinchilla_loss(law, a.parameters, a.tokens);
  return a;
}

double training_days(double flops, int64_t gpus, double peak, double mfu) {
  return flops / (static_cast<double>(gpus) * peak * mfu) / kSecondsPerDay;
}

double cluster_flops(int64_t gpus, double peak, double days, double mfu) {
  return static_cast<double>(gpus) * peak * mfu * days * kSecondsPerDay;
}

}  // namespace meshplan
