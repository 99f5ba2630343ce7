#!/usr/bin/python3
"""Simulated races of the verdict rule (engine/measure/verdict.h): the figures its header
quotes for the margin (kMarginSpreads) and the prior's cap (kMaxPriorDegreesOfFreedom).

Each race: C contenders with fixed log effects, rounds 1..10, ln m = effect + round drift
(σ 0.3, shared by the round) + residual (σ, independent); from round 3 the group is judged
after every round as DecideGroup does (leader = smallest mean log; OUT: slower in every
round and the 95 % moderated interval above 1 + margin; within: the 90 % interval inside
[1/(1+m), 1+m]; decided when all others are OUT, equivalent when all others are OUT or
within; the margin kMarginSpreads times the group's own residual spread moderated by the
prior, capped at 10 %), with the prior's σ0 = σ and ν0 as given. Prints, per ν0, the
share of races ending decided / equivalent / undecided by round 10, decided for the wrong
leader, and the mean rounds; then the coverage of the 95 % interval at 3 rounds for a
group whose σ is 1x or 2x the device's, by ν0. Needs numpy and scipy. A design check,
not a test: it asserts nothing.

  /usr/bin/python3 tests/bench/verdict_margin_sim.py
"""
import numpy as np
from scipy import stats


def group_spread(y, sigma, nu0):
    """The group's residual σ of the two-way model, moderated by the prior (σ0 = sigma)."""
    c, k = y.shape
    r = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    d = (c - 1) * (k - 1)
    return np.sqrt(((r ** 2).sum() + nu0 * sigma ** 2) / (d + nu0))


def decide(y, sigma, nu0, spreads=2, floor=0.02, cap=0.10):
    margin = min(max(spreads * group_spread(y, sigma, nu0), floor), max(floor, cap))
    k = y.shape[1]
    lead = int(np.argmin(y.mean(1)))
    all_out = all_within = True
    for i in range(y.shape[0]):
        if i == lead:
            continue
        d = y[i] - y[lead]
        nu = k - 1 + nu0
        se = np.sqrt(((k - 1) * d.var(ddof=1) + nu0 * 2 * sigma ** 2) / nu / k)
        out = bool((d > 0).all()) and d.mean() - stats.t.ppf(0.975, nu) * se > np.log(1 + margin)
        half90 = stats.t.ppf(0.95, nu) * se
        within = d.mean() - half90 >= -np.log(1 + margin) and d.mean() + half90 <= np.log(1 + margin)
        all_out &= out
        all_within &= out or within
    return ("decided" if all_out else "equivalent" if all_within else "undecided"), lead


def race(rng, effects, sigma, nu0, races=1000, rounds=10):
    ends = {"decided": 0, "equivalent": 0, "undecided": 0, "wrong": 0}
    used = []
    for _ in range(races):
        y = (np.array(effects)[:, None] + sigma * rng.normal(size=(len(effects), rounds)) +
             0.3 * rng.normal(size=(1, rounds)))
        for k in range(3, rounds + 1):
            kind, lead = decide(y[:, :k], sigma, nu0)
            if kind != "undecided" or k == rounds:
                ends[kind] += 1
                ends["wrong"] += kind == "decided" and lead != int(np.argmin(effects))
                used.append(k)
                break
    return {key: round(v / races, 3) for key, v in ends.items()}, round(float(np.mean(used)), 1)


def coverage(rng, ratio, nu0, k=3, n=200000):
    d = rng.normal(0, ratio * np.sqrt(2), size=(n, k))
    nu = k - 1 + nu0
    se = np.sqrt(((k - 1) * d.var(axis=1, ddof=1) + nu0 * 2) / nu / k)
    return round(float(np.mean(np.abs(d.mean(1)) < stats.t.ppf(0.975, nu) * se)), 3)


def main():
    rng = np.random.default_rng(7)
    for nu0 in (1, 8):
        print(f"nu0 {nu0}")
        for sigma in (0.01, 0.02, 0.03, 0.05):
            print(f"  three equal, sigma {sigma}: {race(rng, [0, 0, 0], sigma, nu0)}")
        for gap in (1.1, 1.15, 1.25):
            for sigma in (0.02, 0.05, 0.08):
                print(f"  {gap}x gap, sigma {sigma}: {race(rng, [0, np.log(gap)], sigma, nu0)}")
    for ratio in (1, 2):
        print(f"coverage at 3 rounds, group sigma {ratio}x the device's: " +
              ", ".join(f"nu0 {nu0}: {coverage(rng, ratio, nu0)}" for nu0 in (0, 4, 8, 12)))


if __name__ == "__main__":
    main()
