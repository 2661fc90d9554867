"""AMF with its defaults against the AMF paper's literal variant.

``AMFClassifier`` predicts with the leaf cell that holds a point and scores a node on a
point after counting it (``scoring="count_then_score"``), the conventions of the
reference implementations, which measured best. The paper's variant extends each tree
with the test point (``temporary_extension=True``) and charges a node the loss of its
forecaster before the update (``scoring="before_update"``). Both learn the same
stream, one pass, and are scored on held-out rows.
"""

from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from mondrianlearn import AMFClassifier

X, y = load_digits(return_X_y=True)  # bundled with scikit-learn: 1,797 images, 64 pixels
X = MinMaxScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0,
                                                    stratify=y)

variants = {
    "defaults": AMFClassifier(n_estimators=10, random_state=0),
    "paper": AMFClassifier(n_estimators=10, random_state=0, temporary_extension=True,
                           scoring="before_update"),
    "no aggregation": AMFClassifier(n_estimators=10, random_state=0, use_aggregation=False),
}
for name, model in variants.items():
    for start in range(0, len(y_train), 100):  # one pass, online
        model.partial_fit(X_train[start:start + 100], y_train[start:start + 100],
                          classes=range(10))
    proba = model.predict_proba(X_test)
    print(f"{name:15s} accuracy {accuracy_score(y_test, model.classes_[proba.argmax(1)]):.4f}"
          f"  log loss {log_loss(y_test, proba, labels=model.classes_):.4f}")
