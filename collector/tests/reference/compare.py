"""Independent reference for GET /api/compare: SciPy's Mann-Whitney U and chi-square tests and
NumPy order statistics. Reads the two arms as JSON on stdin, prints the expected figures as JSON."""
import json
import sys

import numpy as np
from scipy import stats

Z = stats.norm.ppf(0.975)


def median_se(values):
    """McKean-Schrader (1984) standard error of the median."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    c = max(int(np.round((n + 1) / 2 - Z * np.sqrt(n / 4))), 1)
    return (x[n - c] - x[c - 1]) / (2 * Z)


def proportion_p(x1, n1, x2, n2):
    table = np.array([[x1, n1 - x1], [x2, n2 - x2]])
    if (table.sum(axis=0) == 0).any():
        return 1.0
    return float(stats.chi2_contingency(table, correction=False).pvalue)


arms = json.load(sys.stdin)
a, b = np.asarray(arms["a"], dtype=float), np.asarray(arms["b"], dtype=float)
mw = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic", use_continuity=True)
difference = float(np.median(b) - np.median(a))
half = Z * np.sqrt(median_se(a) ** 2 + median_se(b) ** 2)
print(json.dumps({
    "medianA": float(np.median(a)),
    "medianB": float(np.median(b)),
    "difference": difference,
    "ci95": [difference - half, difference + half],
    "u": float(mw.statistic),
    "pValue": float(mw.pvalue),
    "stallP": proportion_p(*arms["stalled"]["a"], *arms["stalled"]["b"]),
    "goodP": proportion_p(*arms["good"]["a"], *arms["good"]["b"]),
    "stopRateA": arms["stopped"]["a"][0] / arms["stopped"]["a"][1],
    "stopRateB": arms["stopped"]["b"][0] / arms["stopped"]["b"][1],
    "stopP": proportion_p(*arms["stopped"]["a"], *arms["stopped"]["b"]),
}))
