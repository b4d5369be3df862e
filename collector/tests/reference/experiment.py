"""Independent reference for GET /api/compare, with the session as the unit: statsmodels, SciPy and
NumPy on the streams as sent, none of the collector's code or shortcuts (its sums over units).

Reads JSON on stdin: {"streams": [{"unit", "arm": "a" | "b", "value": number | null,
"stalled": bool | null, "reached", "stopped", "good"}], "split": [wa, wb], "mde"} and prints the
expected figures as JSON (null where a figure does not exist). Units seen in both arms are left out.

- Means and shares: least squares of the stream's figure on an intercept and the arm, with the
  cluster-robust covariance by unit and no small-sample factor (CR0: statsmodels'
  use_correction=False multiplies nothing in), which is what the delta method over units gives.
- Medians: NumPy's, and a cluster bootstrap over units of the median difference's standard error.
- Sample ratio: SciPy's chi-square test of units per arm against the split.
- Power: the textbook normal-approximation sample size for two arms.
- Sequential: the mSPRT of Johari et al. (KDD 2017), derived here as the normal mixture's marginal
  likelihood over the likelihood of no effect, inverted numerically for the confidence sequence.
"""
import json
import sys

import numpy as np
from scipy import optimize, stats
from statsmodels.regression.linear_model import OLS

ALPHA = 0.05
Z = stats.norm.ppf(1 - ALPHA / 2)
POWER = 0.8
MIXING_SHARE = 0.1
BOOTSTRAP = 4000
SEED = 20240601


def cluster_fit(y, x, groups):
    """OLS of y on x, CR0 covariance by unit."""
    return OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})


def compared(streams, figure):
    """Per arm the mean of `figure` (None leaves a stream out), the arm's variance of that mean
    and its units, and the fitted difference b - a with its normal test; `naiveSe`: the difference's
    standard error with the streams taken as independent, to show the data tell the two apart."""
    rows = [(s["unit"], s["arm"] == "b", figure(s)) for s in streams]
    rows = [(unit, is_b, float(y)) for unit, is_b, y in rows if y is not None]
    arms = {}
    for name, want_b in (("a", False), ("b", True)):
        arm = [(unit, y) for unit, is_b, y in rows if is_b == want_b]
        if arm:
            units, y = zip(*arm)
            fit = cluster_fit(np.array(y), np.ones(len(y)), np.unique(units, return_inverse=True)[1])
            arms[name] = {"mean": float(np.mean(y)), "variance": float(fit.bse[0] ** 2), "units": len(set(units))}
    result = {"a": arms.get("a"), "b": arms.get("b"), "difference": None}
    if len(arms) < 2:
        return result
    units, is_b, y = zip(*rows)
    groups = np.unique(units, return_inverse=True)[1]
    x = np.column_stack([np.ones(len(y)), np.array(is_b, dtype=float)])
    fit = cluster_fit(np.array(y), x, groups)
    estimate, se = float(fit.params[1]), float(fit.bse[1])
    naive = OLS(np.array(y), x).fit().bse[1]
    result["difference"] = {
        "estimate": estimate,
        "variance": se**2,
        "ci95": [estimate - Z * se, estimate + Z * se],
        "pValue": float(2 * stats.norm.sf(abs(estimate / se))),
        "naiveSe": float(naive),
    }
    return result


def medians(streams):
    """Each arm's median of the values, and the bootstrap standard error of b - a: units drawn with
    replacement within each arm, all of a drawn unit's values kept together."""
    per_arm = []
    for name in ("a", "b"):
        values = [(s["unit"], s["value"]) for s in streams if s["arm"] == name and s["value"] is not None]
        units, v = zip(*values) if values else ((), ())
        per_arm.append((np.unique(units, return_inverse=True)[1], np.array(v)))
    result = {name: float(np.median(v)) if len(v) else None for name, (_, v) in zip("ab", per_arm)}
    result["differenceSe"] = None
    if result["a"] is None or result["b"] is None:
        return result
    rng = np.random.default_rng(SEED)
    differences = np.empty(BOOTSTRAP)
    for i in range(BOOTSTRAP):
        drawn = []
        for unit_of, values in per_arm:
            n = unit_of.max() + 1
            times = np.bincount(rng.integers(0, n, n), minlength=n)
            drawn.append(np.median(np.repeat(values, times[unit_of])))
        differences[i] = drawn[1] - drawn[0]
    result["differenceSe"] = float(np.std(differences, ddof=1))
    return result


def power(a, b, relative):
    """Units per arm for a two-sided test at ALPHA to detect `relative` of a's mean with POWER,
    n = (z_{1-alpha/2} + z_power)^2 (sigma_a^2 + sigma_b^2) / delta^2, sigma^2 per unit; and the
    relative difference the units at hand detect so."""
    z = Z + stats.norm.ppf(POWER)
    per_unit = a["variance"] * a["units"] + b["variance"] * b["units"]
    return {
        "unitsPerArm": float(np.ceil(z**2 * per_unit / (relative * abs(a["mean"])) ** 2)),
        "detectableNow": float(z * np.sqrt(a["variance"] + b["variance"]) / abs(a["mean"])),
    }


def msprt(estimate, variance, tau):
    """Always-valid p-value and confidence sequence. With the estimate d ~ N(theta, V) and the
    alternative's theta ~ N(theta0, tau^2), the likelihood ratio of the mixture against theta0 is
    N(d; theta0, V + tau^2) / N(d; theta0, V); p = min(1, 1/ratio at theta0 = 0), and the sequence
    is every theta0 whose ratio stays below 1/alpha."""

    def log_ratio(theta0):
        return stats.norm.logpdf(estimate, theta0, np.sqrt(variance + tau**2)) - stats.norm.logpdf(estimate, theta0, np.sqrt(variance))

    p_value = min(1.0, float(np.exp(-log_ratio(0.0))))

    def edge(side):
        def crossing(h):
            return log_ratio(estimate + side * h) - np.log(1 / ALPHA)

        far = np.sqrt(variance)
        while crossing(far) < 0:
            far *= 2
        return estimate + side * optimize.brentq(crossing, 0.0, far, xtol=1e-15 * far, rtol=4 * np.finfo(float).eps)

    return {"pValue": p_value, "ci95": [edge(-1), edge(1)]}


def main():
    given = json.load(sys.stdin)
    arm_of = {}
    for s in given["streams"]:
        arm_of.setdefault(s["unit"], set()).add(s["arm"])
    streams = [s for s in given["streams"] if len(arm_of[s["unit"]]) == 1]
    mean = compared(streams, lambda s: s["value"])
    out = {
        "units": [len({s["unit"] for s in streams if s["arm"] == name}) for name in ("a", "b")],
        "streams": [sum(s["arm"] == name for s in streams) for name in ("a", "b")],
        "count": [sum(s["arm"] == name and s["value"] is not None for s in streams) for name in ("a", "b")],
        "mixedUnits": sum(len(arms) == 2 for arms in arm_of.values()),
        "mean": mean,
        "stallRate": compared(streams, lambda s: s["stalled"]),
        "stopRate": compared(streams, lambda s: s["stopped"] if s["reached"] else None),
        "goodput": compared(streams, lambda s: s["good"]),
        "median": medians(streams),
        "srmP": None,
        "power": None,
        "sequential": None,
    }
    if sum(out["units"]) > 0:
        split = np.array(given["split"], dtype=float)
        out["srmP"] = float(stats.chisquare(out["units"], split / split.sum() * sum(out["units"])).pvalue)
    if mean["difference"]:
        out["power"] = power(mean["a"], mean["b"], given["mde"])
        tau = MIXING_SHARE * abs(mean["a"]["mean"] + mean["b"]["mean"]) / 2
        out["sequential"] = msprt(mean["difference"]["estimate"], mean["difference"]["variance"], tau)
    json.dump(out, sys.stdout)


main()
