// Compute-optimal model size and tokens (Hoffmann et al. 2022, "Chinchilla"), 6ND, training days.
#pragma once
#include <cstdint>

namespace meshplan {

/// A compute-optimal allocation of a budget C = 6 N D.
struct Allocation {
  double parameters = 0;  // N
  double tokens = 0;      // D
  double flops = 0;       // 6 N D (equals the budget)
  double loss = 0;        // predicted loss under the Approach 3 law (nats/token)
};

/// Fixed tokens-per-parameter rule (20 in Hoffmann et al. 2022, Table 3's rule of thumb):
/// N = sqrt(C / (6 * r)), D = r * N. For C = 1e21: N = 2.89e9, D = 5.77e10.
Allocation allocation_tokens_per_parameter(double compute_flops, double tokens_per_parameter = 20.0);

/// Hoffmann et al. 2022 Approach 3 (parametric fit, eq. 10): L(N, D) = E + A/N^alpha + B/D^beta
/// with E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28.
struct ChinchillaLaw {
  double E = 1.69;
  double A = 406.4;
  double B = 410.7;
  double alpha = 0.34;
  double beta = 0.28;
};

double chinchilla_loss(const ChinchillaLaw& law, double parameters, double tokens);

/// Minimises L under C = 6 N D (their eq. 4): N_opt = G (C/6)^(beta/(alpha+beta)),
/// D_opt = (1/G) (C/6)^(alpha/(alpha+beta)), G = (alpha A / (beta B))^(1/(alpha+beta)).
Allocation allocation_approach3(double compute_flops, const ChinchillaLaw& law = ChinchillaLaw{});

/// Wall-clock days to execute `flops` on `gpus` GPUs of `peak_flops_per_gpu` at utilisation `mfu`.
double training_days(double flops, int64_t gpus, double peak_flops_per_gpu, double mfu);

/// The budget a cluster delivers in `days` at utilisation `mfu` (inverse of training_days).
double cluster_flops(int64_t gpus, double peak_flops_per_gpu, double days, double mfu);

}  // namespace meshplan
