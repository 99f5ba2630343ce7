// The prior of a moderated variance, fitted to many sample variances: Smyth, "Linear
// models and empirical Bayes methods for assessing differential expression in microarray
// experiments", Stat. Appl. Genet. Mol. Biol. 3(1), 2004, §6.2 (limma's fitFDist without
// covariates).
//
// Model: each unit g (a group of a run: the strategies of one point) has its own true
// variance σ_g², drawn from a scaled inverse chi-square prior with d0 degrees of freedom
// and scale s0²; its sample variance s_g² has d_g degrees of freedom. Then
// s_g² ~ s0² · F(d_g, d0), and with e_g = ln s_g² − ψ(d_g/2) + ln(d_g/2):
//   E[e_g] = ln s0² − ψ(d0/2) + ln(d0/2),  Var[e_g] = ψ'(d_g/2) + ψ'(d0/2)
// (ψ digamma, ψ' trigamma). The moment estimates: ē = mean e_g; ψ'(d0/2) = mean over g
// of (e_g − ē)² · G/(G−1) − ψ'(d_g/2); when that is <= 0 the units are no more varied
// than their sampling says, d0 = +inf and s0² = exp(ē); else d0 = 2 ψ'⁻¹(·) (Newton's
// method, Smyth's appendix) and s0² = exp(ē + ψ(d0/2) − ln(d0/2)).
//
// What it buys: where the units' noise differs widely (a 1 µs task is 40x noisier than
// a 10 ms one on one device), d0 comes out small and each unit's interval rests on its
// own variance; where they agree, d0 is large and a unit with three processes that
// happen to agree borrows the others' spread.
//
// Pure functions; thread-safe.
#pragma once

#include <vector>

namespace fleetmark::engine {

struct VariancePrior {
  double variance = 0;  // s0², >= 0
  double dof = 0;       // d0, >= 0; +inf when the units' variances agree within sampling
};

// One unit's sample variance and its degrees of freedom.
struct SampleVariance {
  double variance = 0;  // s_g² >= 0
  double dof = 0;       // d_g > 0
};

// Fits the prior (method above) to the units with a finite variance > 0 and dof > 0
// (a zero variance has no logarithm: such units are left out; one below 1e-5 times the
// median is raised to that, as limma's fitFDist does). With fewer than two
// such units there is nothing to fit: {variance of the one unit (or 0), dof 0}, which
// leaves every interval to its own variance. Pure.
VariancePrior FitVariancePrior(const std::vector<SampleVariance>& units);

// ψ'⁻¹(x) for x > 0: the y > 0 with trigamma(y) = x (Smyth 2004, appendix). Pure.
double InverseTrigamma(double x);

}  // namespace fleetmark::engine
