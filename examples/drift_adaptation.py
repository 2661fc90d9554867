"""Drift adaptation with ``drift="adwin"`` on AMF.

A stream whose concept changes: for the first 3,000 rows the label is 1 above the
line x0 + x1 = 1, then the rule flips. A stationary AMF keeps its trees' old counts and
recovers slowly; with ``drift="adwin"`` each tree's online loss feeds an ADWIN
detector, a warning starts a background tree and a detected drift swaps it in.
``drift_events_`` records what happened.

Then a regression stream with a linear part that changes sign at row 3,000: the
drift-adaptive ``AMFRegressor`` also corrects its forecast with a gated online linear
model of its errors (drift setting ``linear_rate``; 0 leaves it out), which constant
cells learn slowly. Right after the flip the correction still holds the old linear
part until its steps and its gate catch up, and costs a little there; over the
stream it gains.
"""

import numpy as np

from mondrianlearn import AMFClassifier, AMFRegressor

rng = np.random.RandomState(0)
n, change = 6000, 3000
X = rng.uniform(size=(n, 2))
y = (X[:, 0] + X[:, 1] > 1).astype(int)
y[change:] = 1 - y[change:]                    # the concept flips
y ^= (rng.uniform(size=n) < 0.05)              # 5% label noise

models = {"stationary": AMFClassifier(n_estimators=10, random_state=0),
          "drift='adwin'": AMFClassifier(n_estimators=10, random_state=0, drift="adwin")}
for name, model in models.items():
    correct = np.zeros(n, dtype=bool)
    for start in range(0, n, 50):               # test-then-train in batches of 50
        batch = slice(start, start + 50)
        if start > 0:
            correct[batch] = model.predict(X[batch]) == y[batch]
        model.partial_fit(X[batch], y[batch], classes=[0, 1])
    after = correct[change:change + 1000].mean()
    print(f"{name:14s} accuracy: before the change {correct[50:change].mean():.3f}, "
          f"the 1,000 rows after it {after:.3f}, the last 1,000 rows "
          f"{correct[-1000:].mean():.3f}")

events = models["drift='adwin'"].drift_events_
replaced = events[np.isin(events["kind"], ["drift", "swap"])]
print(f"drift events: {len(events)}, of which trees replaced: {len(replaced)}, "
      f"first replacement at row {replaced['row'].min() if len(replaced) else None}")

# ------------------------------------------------------------------ regression
X = rng.uniform(size=(n, 5))
y = X[:, :4] @ [6.0, -4.0, 3.0, 2.0] + np.sin(4.0 * X[:, 4]) + 0.2 * rng.randn(n)
y[change:] = -y[change:]                       # the concept flips
regressors = {
    "stationary": AMFRegressor(n_estimators=10, random_state=0),
    "drift, no correction": AMFRegressor(n_estimators=10, random_state=0,
                                         drift={"linear_rate": 0.0}),
    "drift='adwin'": AMFRegressor(n_estimators=10, random_state=0, drift="adwin"),
}
for name, model in regressors.items():
    errors = np.zeros(n)
    for start in range(0, n, 50):
        batch = slice(start, start + 50)
        if start > 0:
            errors[batch] = np.abs(model.predict(X[batch]) - y[batch])
        model.partial_fit(X[batch], y[batch])
    print(f"{name:20s} MAE: before the change {errors[50:change].mean():.3f}, the 1,000 "
          f"rows after it {errors[change:change + 1000].mean():.3f}, the last 1,000 rows "
          f"{errors[-1000:].mean():.3f}, all rows {errors[50:].mean():.3f}")
