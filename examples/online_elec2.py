"""Online classification on the bundled Elec2 stream, with progressive accuracy.

Elec2 (shipped with the package) is a stream of half-hourly electricity prices: will
the price go up? A Mondrian forest and AMF learn it in mini-batches of 100 rows,
test-then-train: each batch is predicted before it is learned, so every prediction is
on rows the model has not seen. ``progressive_evaluation`` does the bookkeeping and
compiles the kernels before its clock starts.
"""

from mondrianlearn import AMFClassifier, MondrianForestClassifier
from mondrianlearn.datasets import load_electricity
from mondrianlearn.evaluation import Learner, format_table, progressive_evaluation

X, y = load_electricity(n_samples=5000)  # the first 5,000 rows, in time order

learners = [
    Learner("Mondrian forest", MondrianForestClassifier(n_estimators=10, random_state=0)),
    Learner("AMF", AMFClassifier(n_estimators=10, random_state=0)),
]
traces = progressive_evaluation(learners, X, y, batch_size=100, progress=False)

print(format_table([{"model": t.name, **t.summary} for t in traces],
                   ["model", "accuracy", "log_loss", "samples_per_second"],
                   floatfmt="{:.4g}"))
for t in traces:  # the curve: accuracy over the rows scored so far
    curve = ", ".join(f"{n}: {m:.3f}" for n, m in zip(t.samples[9::10], t.metric[9::10]))
    print(f"{t.name} progressive accuracy after {curve}")

# The same by hand, for any model with partial_fit:
model = AMFClassifier(n_estimators=10, random_state=0)
correct = 0
for start in range(0, len(y), 100):
    X_batch, y_batch = X[start:start + 100], y[start:start + 100]
    if start > 0:
        correct += (model.predict(X_batch) == y_batch).sum()
    model.partial_fit(X_batch, y_batch)
print(f"AMF by hand: {correct / (len(y) - 100):.4f} of the rows after the first batch "
      f"predicted right")
