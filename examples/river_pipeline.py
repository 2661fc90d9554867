"""The library's models in a river pipeline.

``mondrianlearn.river`` gives the models river's interface (``learn_one``,
``predict_proba_one``), so river's pipelines, metrics and ``progressive_val_score``
work unchanged. Phishing ships with river (nothing is downloaded). Needs river:
``pip install "mondrian-learn[river]"``.
"""

from river import datasets, evaluate, forest, metrics, preprocessing

from mondrianlearn.river import AMFClassifier, MondrianForestClassifier

models = {
    "mondrianlearn AMF": preprocessing.MinMaxScaler() | AMFClassifier(n_estimators=10,
                                                                       seed=42),
    "mondrianlearn MF": preprocessing.MinMaxScaler() | MondrianForestClassifier(
        n_estimators=10, seed=42),
    "river AMF": preprocessing.MinMaxScaler() | forest.AMFClassifier(n_estimators=10,
                                                                     seed=42),
}
for name, model in models.items():
    metric = evaluate.progressive_val_score(datasets.Phishing(), model,
                                            metrics.LogLoss() + metrics.Accuracy())
    print(f"{name:18s} {metric}")

# One row at a time, by hand:
model = preprocessing.StandardScaler() | AMFClassifier(n_estimators=10, seed=42)
for x, y in datasets.Phishing().take(200):
    model.learn_one(x, y)
x, y = next(iter(datasets.Phishing()))
print(f"first row: label {y}, predicted probabilities {model.predict_proba_one(x)}")
