"""Ridge regression on Mondrian features kept as an updatable Cholesky factor.

``A = Phi^T W Phi + alpha I = U^T U`` with ``U`` upper triangular, stored in the
leading ``(C, C)`` block of a square buffer (rows of ``U`` are contiguous, which is
what every update below walks along). All updates are ``O(C^2)``:

- :func:`chol_delete`: drop feature ``p`` (a row and column of ``A``);
- :func:`chol_append`: add a feature given its column of ``A``;
- :func:`chol_rank1_update`: ``A += x x^T`` (a new data point).
"""

import numpy as np

from ..engine._jit import kernel


@kernel
def chol_rank1_update(U, size, x, first):
    """``U^T U + x x^T`` in place on the leading ``size`` block; ``x`` is destroyed.

    ``x[:first]`` must be zero (those rows are unchanged).
    """
    for k in range(first, size):
        xk = x[k]
        if xk == 0.0:
            continue
        ukk = U[k, k]
        r = np.sqrt(ukk * ukk + xk * xk)
        cos = ukk / r
        sin = xk / r
        U[k, k] = r
        row = U[k]
        for i in range(k + 1, size):
            u = cos * row[i] + sin * x[i]
            x[i] = cos * x[i] - sin * row[i]
            row[i] = u


@kernel
def chol_delete(U, size, p, work):
    """Remove row and column ``p`` of ``A`` from its factor; the size becomes ``size - 1``.

    Rows after ``p`` move up and columns after ``p`` move left (``p`` is the
    position, not a feature id); the trailing block absorbs the removed row of ``U``
    by a rank-1 update (Seeger, 2004).
    """
    m = size - p - 1
    for i in range(m):
        work[i] = U[p, p + 1 + i]
    # Rows above p: shift their columns after p one to the left.
    for i in range(p):
        for j in range(p + 1, size):
            U[i, j - 1] = U[i, j]
        U[i, size - 1] = 0.0
    # Rows after p: move up and left.
    for i in range(p + 1, size):
        for j in range(i, size):
            U[i - 1, j - 1] = U[i, j]
    for j in range(size):
        U[size - 1, j] = 0.0
        U[j, size - 1] = 0.0
    # Trailing block: U22' ^T U22' = U22^T U22 + u u^T.
    for i in range(m):
        ukk = U[p + i, p + i]
        xk = work[i]
        if xk == 0.0:
            continue
        r = np.sqrt(ukk * ukk + xk * xk)
        cos = ukk / r
        sin = xk / r
        U[p + i, p + i] = r
        row = U[p + i]
        for j in range(p + i + 1, size - 1):
            u = cos * row[j] + sin * work[j - p]
            work[j - p] = cos * work[j - p] - sin * row[j]
            row[j] = u


@kernel
def chol_append(U, size, column, work):
    """Append a feature whose column of ``A`` is ``column[:size + 1]``.

    ``column[size]`` is the new diagonal entry. Returns ``False`` (and changes
    nothing) if the extended matrix is not positive definite numerically.
    """
    for i in range(size):
        work[i] = column[i]
    # Solve U^T z = a, column-oriented (rows of U are contiguous).
    for j in range(size):
        z = work[j] / U[j, j]
        work[j] = z
        for i in range(j + 1, size):
            work[i] -= U[j, i] * z
    diag = column[size]
    for i in range(size):
        diag -= work[i] * work[i]
    if not diag > 0.0:
        return False
    for i in range(size):
        U[i, size] = work[i]
    U[size, size] = np.sqrt(diag)
    return True


@kernel
def chol_solve(U, size, b, out):
    """Solve ``U^T U out = b`` on the leading ``size`` block."""
    for i in range(size):
        out[i] = b[i]
    for j in range(size):
        z = out[j] / U[j, j]
        out[j] = z
        for i in range(j + 1, size):
            out[i] -= U[j, i] * z
    for i in range(size - 1, -1, -1):
        acc = out[i]
        for j in range(i + 1, size):
            acc -= U[i, j] * out[j]
        out[i] = acc / U[i, i]


@kernel
def chol_logdet(U, size):
    """``log det A`` from its factor."""
    total = 0.0
    for i in range(size):
        total += np.log(U[i, i])
    return 2.0 * total


@kernel
def add_rows(U, size, b, columns, weights, targets, scale, x):
    """Rank-1 updates for rows with ``len(columns[i])`` non-zeros ``scale`` each.

    ``columns`` is (n_rows, n_trees) of feature positions, sorted per row;
    ``b += w * scale * y`` on those positions.
    """
    for r in range(columns.shape[0]):
        w = weights[r]
        if w <= 0.0:
            continue
        v = np.sqrt(w) * scale
        x[:size] = 0.0
        for t in range(columns.shape[1]):
            x[columns[r, t]] += v
            b[columns[r, t]] += w * scale * targets[r]
        chol_rank1_update(U, size, x, columns[r, 0])


class OnlineRidge:
    """Exact ridge regression whose features and rows can be added one at a time.

    Parameters
    ----------
    alpha : float
        Regularisation ``delta^2`` (also the prior precision ratio).
    scale : float
        Value of every non-zero feature (``1/sqrt(M)``).
    """

    def __init__(self, alpha, scale):
        self.alpha = float(alpha)
        self.scale = float(scale)
        self.size = 0
        self.U = np.zeros((0, 0))
        self.b = np.zeros(0)
        self.coef_ = np.zeros(0)

    def _reserve(self, size):
        if size <= self.U.shape[0]:
            return
        capacity = max(size, self.U.shape[0] * 3 // 2, 16)
        U = np.zeros((capacity, capacity))
        U[: self.size, : self.size] = self.U[: self.size, : self.size]
        b = np.zeros(capacity)
        b[: self.size] = self.b[: self.size]
        self.U, self.b = U, b

    def add_features(self, n_new):
        """Append features that are zero on every row seen so far."""
        self._reserve(self.size + n_new)
        root = np.sqrt(self.alpha)
        for i in range(self.size, self.size + n_new):
            self.U[i, i] = root
        self.size += n_new

    def add_rows(self, columns, y, sample_weight):
        """Add rows given the sorted feature columns of each (n_rows, M)."""
        x = np.zeros(self.size)
        add_rows(self.U, self.size, self.b, np.ascontiguousarray(columns, dtype=np.int64),
                 sample_weight, y, self.scale, x)

    def fit_dense(self, A, b):
        """Start from a full ``A`` (regularisation included) and ``b``."""
        self.size = A.shape[0]
        self.U = np.ascontiguousarray(np.linalg.cholesky(A).T)
        self.b = np.array(b, dtype=np.float64)
        self.solve()

    def solve(self):
        out = np.empty(self.size)
        chol_solve(self.U, self.size, self.b, out)
        self.coef_ = out
        return out

    def matrix(self):
        """``A`` rebuilt from the factor (for checks)."""
        U = self.U[: self.size, : self.size]
        return U.T @ U
