"""Ridge regression on Mondrian features: Cholesky factors and their updates.

The lifetime sweep (``_sweep``) keeps ``A = Phi^T W Phi + alpha I = U^T U`` with
``U`` upper triangular in the leading ``(C, C)`` block of a square buffer (rows of
``U`` contiguous); its updates are ``O(C^2)``:

- :func:`chol_delete`: drop feature ``p`` (a row and column of ``A``);
- :func:`chol_append`: add a feature given its column of ``A``.

Online learning (:class:`OnlineRidge`) keeps the lower factor ``A = L L^T`` instead
(rows of ``L`` contiguous, so that ``L.T`` is the column-major upper factor LAPACK's
``dtpqrt`` updates in place for a block of rows) and, beside it, the Gram matrix of
the finer cells the features are unions of, from which any coarser set of features
can be refactored without the data.

The online model's LAPACK calls (:func:`one_blas_thread`) run on one thread: they are
many mid-sized calls, for which OpenBLAS's threads gain little, and on a busy machine
(or beside ``n_jobs`` threads) its waiting threads made a stream of mini-batches ten
times slower (measured on two cores).
"""

import numpy as np
from scipy.linalg import lapack

from ..engine._jit import kernel


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


# ------------------------------------------------------------ online (lower factor)
@kernel
def _rotate_row(row, xj, start, stop, cos, sin):
    """Apply the rotations ``start .. stop - 1`` to ``(row[k], xj)`` in turn; return
    the rotated ``xj``."""
    for k in range(start, stop):
        s = sin[k]
        if s == 0.0:
            continue
        c = cos[k]
        r = row[k]
        row[k] = c * r + s * xj
        xj = c * xj - s * r
    return xj


@kernel
def _new_rotation(row, j, xj, cos, sin):
    """The rotation that zeroes ``xj`` against the diagonal ``row[j]``."""
    if xj == 0.0:
        cos[j] = 1.0
        sin[j] = 0.0
        return
    d = row[j]
    h = np.sqrt(d * d + xj * xj)
    cos[j] = d / h
    sin[j] = xj / h
    row[j] = h


@kernel
def lower_rank1_update(L, size, x, first, cos, sin):
    """``L L^T + x x^T`` in place on the leading ``size`` block; ``x`` is destroyed.

    ``x[:first]`` must be zero (those rows of ``L`` are unchanged). Row ``j`` of
    ``L`` receives the Givens rotations of the rows before it in turn (``cos`` and
    ``sin`` hold them, one per row), so every pass runs along a contiguous row; four
    rows at a time take the rotations together, four independent chains of
    operations where one row alone would wait on each step.
    """
    j = first
    while j + 4 <= size:
        r0, r1, r2, r3 = L[j], L[j + 1], L[j + 2], L[j + 3]
        x0, x1, x2, x3 = x[j], x[j + 1], x[j + 2], x[j + 3]
        for k in range(first, j):
            s = sin[k]
            if s == 0.0:
                continue
            c = cos[k]
            a = r0[k]
            r0[k] = c * a + s * x0
            x0 = c * x0 - s * a
            a = r1[k]
            r1[k] = c * a + s * x1
            x1 = c * x1 - s * a
            a = r2[k]
            r2[k] = c * a + s * x2
            x2 = c * x2 - s * a
            a = r3[k]
            r3[k] = c * a + s * x3
            x3 = c * x3 - s * a
        _new_rotation(r0, j, x0, cos, sin)
        x1 = _rotate_row(r1, x1, j, j + 1, cos, sin)
        _new_rotation(r1, j + 1, x1, cos, sin)
        x2 = _rotate_row(r2, x2, j, j + 2, cos, sin)
        _new_rotation(r2, j + 2, x2, cos, sin)
        x3 = _rotate_row(r3, x3, j, j + 3, cos, sin)
        _new_rotation(r3, j + 3, x3, cos, sin)
        j += 4
    while j < size:
        row = L[j]
        _new_rotation(row, j, _rotate_row(row, x[j], first, j, cos, sin), cos, sin)
        j += 1


@kernel
def lower_add_rows(L, size, b, columns, weights, targets, scale, x, cos, sin):
    """Rank-1 updates of ``L`` for rows of ``len(columns[i])`` non-zeros ``scale``
    each (``columns`` sorted per row); ``b += w * scale * y`` on those positions."""
    x[:size] = 0.0
    for r in range(columns.shape[0]):
        w = weights[r]
        if w <= 0.0:
            continue
        v = np.sqrt(w) * scale
        first = columns[r, 0]
        for t in range(columns.shape[1]):
            x[columns[r, t]] = v
            b[columns[r, t]] += w * scale * targets[r]
        lower_rank1_update(L, size, x, first, cos, sin)
        x[first:size] = 0.0


@kernel
def lower_solve(L, size, b, out):
    """Solve ``L L^T out = b`` on the leading ``size`` block (the forward pass sums
    each row in four partial sums, four independent chains)."""
    for j in range(size):
        row = L[j]
        a0 = a1 = a2 = a3 = 0.0
        k = 0
        while k + 4 <= j:
            a0 += row[k] * out[k]
            a1 += row[k + 1] * out[k + 1]
            a2 += row[k + 2] * out[k + 2]
            a3 += row[k + 3] * out[k + 3]
            k += 4
        while k < j:
            a0 += row[k] * out[k]
            k += 1
        out[j] = (b[j] - ((a0 + a1) + (a2 + a3))) / row[j]
    for j in range(size - 1, -1, -1):
        row = L[j]
        z = out[j] / row[j]
        out[j] = z
        for k in range(j):
            out[k] -= row[k] * z


@kernel
def lower_logdet(L, size):
    """``log det A`` from its factor (the diagonal may carry signs)."""
    total = 0.0
    for i in range(size):
        total += np.log(abs(L[i, i]))
    return 2.0 * total


@kernel
def gram_add_rows(G, g, cells, weights, targets, scale):
    """``G += scale^2 w phi phi^T`` and ``g += scale w y phi`` for rows whose cells
    are ``cells[i]`` (one per tree, distinct)."""
    s2 = scale * scale
    for r in range(cells.shape[0]):
        w = weights[r]
        if w <= 0.0:
            continue
        ws2 = w * s2
        g_add = w * scale * targets[r]
        for a in range(cells.shape[1]):
            row = G[cells[r, a]]
            g[cells[r, a]] += g_add
            for c in range(cells.shape[1]):
                row[cells[r, c]] += ws2


@kernel
def gram_merge(G, g, n, group, out, out_g):
    """``out[group[i], group[j]] += G[i, j]`` and ``out_g[group[i]] += g[i]`` for
    ``i, j < n``: the Gram matrix of unions of cells (``out`` starts at zero).

    The upper triangle is summed and copied to the lower one, so that ``out`` is
    exactly symmetric."""
    for i in range(n):
        gi = group[i]
        out_g[gi] += g[i]
        row = G[i]
        out_row = out[gi]
        for j in range(n):
            gj = group[j]
            if gi <= gj:
                out_row[gj] += row[j]
    for p in range(out.shape[0]):
        for q in range(p + 1, out.shape[0]):
            out[q, p] = out[p, q]


@kernel
def gram_remove_rows(A, b, columns, weights, targets, scale):
    """``A -= scale^2 w phi phi^T`` and ``b -= scale w y phi`` (rows held out of a
    system that counted them)."""
    s2 = scale * scale
    for r in range(columns.shape[0]):
        w = weights[r]
        ws2 = w * s2
        b_sub = w * scale * targets[r]
        for a in range(columns.shape[1]):
            row = A[columns[r, a]]
            b[columns[r, a]] -= b_sub
            for c in range(columns.shape[1]):
                row[columns[r, c]] -= ws2


_CONTROLLER = []


def one_blas_thread():
    """A context in which BLAS and LAPACK run on one thread (threadpoolctl)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


_GIVENS_ROWS = 8
"""Up to this many rows a call updates the factor row by row (Givens rotations in
compiled code); larger calls use LAPACK's blocked ``dtpqrt``, several times faster
per row once the factor has a few hundred features."""


ALPHA_LOST = 8.0
"""``OnlineRidge.check_weight`` refuses rows once ``alpha`` is below ``ALPHA_LOST``
times the rounding of the bound on the Gram matrix's diagonal: where a batch fit's
Cholesky factorisation starts to fail (measured: it refused weights of 1e11 on 200
rows of 10 partitions, at about a quarter of the rounding of the bound)."""


TARGET_SCALE_LIMIT = 1e150
"""Largest total weight times largest target magnitude (:func:`check_target_scale`)."""


def check_target_scale(total_weight, largest_target):
    """Raise a ``ValueError`` saying to rescale ``y`` if targets of magnitude up to
    ``largest_target``, with weights summing to ``total_weight``, reach
    ``TARGET_SCALE_LIMIT``: the ridge system sums weighted targets and the lifetime
    selection their squares, which overflowed (NaN predictions, silently, from
    targets of about 1e308; a constant forecast from one target of 1e300)."""
    if not total_weight * largest_target < TARGET_SCALE_LIMIT:
        raise ValueError(
            f"Targets up to {largest_target:.3g} in magnitude, with weights adding up to "
            f"{total_weight:.3g}, overflow the ridge system's float64 sums (their product "
            f"must stay below {TARGET_SCALE_LIMIT:g}). Rescale y (divide it by a power "
            "of ten) and the predictions back.")


def ridge_cholesky(A, alpha):
    """Lower Cholesky factor of a ridge system ``A`` (weighted Gram matrix plus
    ``alpha`` times the identity), or a ``FloatingPointError`` that says what to change.

    In exact arithmetic ``A`` is positive definite for any ``alpha > 0``; in floating
    point it stops being so once ``alpha`` is lost against the Gram matrix (an
    ``alpha`` near 1e-15 with unit weights, or sample weights of 1e100 with the
    default ``alpha``): the weights scale the squared errors and ``alpha`` does not.
    """
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        diagonal = float(np.max(np.diag(A))) if A.size else 0.0
        raise FloatingPointError(
            f"The ridge system is not positive definite in floating point: alpha={alpha:g} "
            f"is lost against the weighted Gram matrix (largest diagonal {diagonal:.3g}); "
            "increase alpha or scale the sample weights down.") from None


def _grow(array, size, capacity, fill=0.0):
    """A copy of ``array``'s leading block (1-D or square) in a larger buffer."""
    if array.ndim == 1:
        out = np.full(capacity, fill, dtype=array.dtype)
        out[:size] = array[:size]
    else:
        out = np.zeros((capacity, capacity))
        out[:size, :size] = array[:size, :size]
    return out


class OnlineRidge:
    """Exact ridge regression on unions of Mondrian cells, updated row by row.

    The rows seen so far are summarised on the cells (the leaves of the
    partitions): their Gram matrix ``G = Phi^T W Phi`` (without regularisation),
    ``g = Phi^T W y``, ``weight = sum w`` and the mean square of the targets,
    :meth:`target_spread` squared (kept relative to the largest ``|y|`` seen, so
    that it cannot overflow). The model's
    features are unions of cells (``cell_column[c]`` is the feature of cell ``c``);
    its system ``A = S^T G S + alpha I``, ``b = S^T g`` is kept as the lower
    Cholesky factor ``A = L L^T``. A new row updates both levels (``O(M^2)`` for
    the cells, ``O(C^2)`` for the factor); merging cells (coarser partitions) or
    changing which cells make a feature only needs the summaries (a refactor).

    Buffers grow by half when full, never past ``max_cells`` rows (the model's
    bound on the number of cells).

    Parameters
    ----------
    alpha : float
        Regularisation ``delta^2`` (also the prior precision ratio).
    scale : float
        Value of every non-zero feature (``1/sqrt(M)``).
    max_cells : int
        Largest number of cells (and features) the model will hold.
    """

    def __init__(self, alpha, scale, max_cells):
        self.alpha = float(alpha)
        self.scale = float(scale)
        self.max_cells = int(max_cells)
        self.n_cells = 0
        self.G = np.zeros((0, 0))
        self.g = np.zeros(0)
        self.cell_column = np.zeros(0, dtype=np.int64)
        self.y_scale = 0.0
        self.yy = 0.0  # sum w (y / y_scale)^2
        self.weight = 0.0
        self.size = 0
        self.L = np.zeros((0, 0))
        self.b = np.zeros(0)
        self.coef_ = np.zeros(0)

    # ------------------------------------------------------------------ storage
    def _capacity(self, needed, current):
        if needed <= current:
            return current
        return max(needed, min(max(current + current // 2, 16), self.max_cells))

    def add_cells(self, columns):
        """Append cells that hold no row seen so far; ``columns[i]`` is the feature
        of the ``i``-th new cell."""
        n_new = len(columns)
        needed = self.n_cells + n_new
        capacity = self._capacity(needed, self.G.shape[0])
        if capacity > self.G.shape[0]:
            self.G = _grow(self.G, self.n_cells, capacity)
            self.g = _grow(self.g, self.n_cells, capacity)
        if needed > self.cell_column.shape[0]:
            self.cell_column = _grow(self.cell_column, self.n_cells, self.G.shape[0])
        self.cell_column[self.n_cells:needed] = columns
        self.n_cells = needed

    def add_features(self, n_new):
        """Append features that are zero on every row seen so far."""
        needed = self.size + n_new
        capacity = self._capacity(needed, self.L.shape[0])
        if capacity > self.L.shape[0]:
            self.L = _grow(self.L, self.size, capacity)
            self.b = _grow(self.b, self.size, capacity)
        root = np.sqrt(self.alpha)
        for i in range(self.size, needed):
            self.L[i, i] = root
        self.size = needed

    def merge_cells(self, group, n_groups):
        """Merge the cells: cell ``c`` becomes part of new cell ``group[c]``.

        The features are left as they are: call :meth:`set_features` next.
        """
        n = self.n_cells
        G = np.zeros((n_groups, n_groups))
        g = np.zeros(n_groups)
        gram_merge(self.G, self.g, n, np.ascontiguousarray(group[:n], dtype=np.int64), G, g)
        self.G, self.g, self.n_cells = G, g, n_groups
        self.cell_column = np.zeros(n_groups, dtype=np.int64)

    def set_features(self, cell_column, n_features, factor=None):
        """Make feature ``cell_column[c]`` hold cell ``c`` and refactor (or take
        ``factor = (L, b)``, the system of these features, from :meth:`system`)."""
        self.cell_column = np.array(cell_column[: self.n_cells], dtype=np.int64)
        if factor is None:
            A, b = self.system(self.cell_column, n_features)
            factor = (ridge_cholesky(A, self.alpha), b)
        self.L = np.ascontiguousarray(factor[0])
        self.b = factor[1]
        self.size = n_features

    def system(self, cell_column, n_features):
        """``(A, b)`` of the features ``cell_column`` (one per cell)."""
        A = np.zeros((n_features, n_features))
        b = np.zeros(n_features)
        gram_merge(self.G, self.g, self.n_cells,
                   np.ascontiguousarray(cell_column[: self.n_cells], dtype=np.int64), A, b)
        A[np.diag_indices_from(A)] += self.alpha
        return A, b

    # -------------------------------------------------------------------- rows
    def check_rows(self, targets, sample_weight):
        """Raise a ``FloatingPointError`` if the rows (centred ``targets``, their
        weights) would lose ``alpha`` or overflow in floating point; nothing is
        changed.

        A feature's diagonal entry of the Gram matrix is at most the total weight of
        the rows times ``scale**2`` (a row is in one cell of each partition). Once
        ``alpha`` falls below the rounding of that bound (times ``ALPHA_LOST``), the
        system is singular in floating point: a batch fit refuses it
        (:func:`ridge_cholesky`), while the online update of the factor would go on
        and give garbage, silently (predictions off by orders of magnitude with
        sample weights of 1e13 and more at the default ``alpha``). Unit weights would
        need about 1e12 rows per partition to get there. The targets are checked as
        in a batch fit (:func:`check_target_scale`).
        """
        weight = self.weight + float(np.sum(sample_weight))
        bound = weight * self.scale ** 2
        if not bound * ALPHA_LOST * np.finfo(np.float64).eps < self.alpha:
            raise FloatingPointError(
                f"The ridge system would lose alpha={self.alpha:g} in floating point: the "
                f"sample weights add up to {weight:.3g}; increase alpha or scale the "
                "sample weights down.")
        top = float(np.abs(targets).max()) if len(targets) else 0.0
        if np.isfinite(top):  # (values not finite are the caller's checks' to refuse)
            check_target_scale(weight, max(top, self.y_scale))

    def add_rows(self, cells, columns, y, sample_weight, update_factor=True):
        """Add rows given their cells and their sorted features, both (n_rows, M).

        ``update_factor=False`` leaves the factor behind (a refactor follows).
        """
        cells = np.ascontiguousarray(cells, dtype=np.int64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        w = np.ascontiguousarray(sample_weight, dtype=np.float64)
        gram_add_rows(self.G, self.g, cells, w, y, self.scale)
        top = float(np.abs(y).max()) if y.shape[0] else 0.0
        if top > self.y_scale:
            self.yy *= (self.y_scale / top) ** 2
            self.y_scale = top
        if self.y_scale > 0:
            ys = y / self.y_scale
            self.yy += float(np.dot(w, ys * ys))
        self.weight += float(w.sum())
        if not update_factor:
            return
        columns = np.ascontiguousarray(columns, dtype=np.int64)
        size = self.size
        if columns.shape[0] <= _GIVENS_ROWS:
            lower_add_rows(self.L, size, self.b, columns, w, y, self.scale,
                           np.zeros(size), np.empty(size), np.empty(size))
            return
        V = np.zeros((columns.shape[0], size), order="F")
        rows = np.repeat(np.arange(columns.shape[0]), columns.shape[1])
        V[rows, columns.ravel()] = np.repeat(np.sqrt(w) * self.scale, columns.shape[1])
        np.add.at(self.b, columns.ravel(), np.repeat(w * y * self.scale, columns.shape[1]))
        R = self.L[:size, :size].T  # column-major upper factor, in place when exact
        R_new, _, _, info = lapack.dtpqrt(0, min(32, size), R, V, overwrite_a=1,
                                          overwrite_b=1)
        if info != 0:  # pragma: no cover - only for invalid arguments
            raise FloatingPointError(f"dtpqrt failed (info={info}).")
        if not np.shares_memory(R_new, self.L):
            self.L[:size, :size] = R_new.T
        # dtpqrt leaves the upper factor's strictly lower part as it was (zeros)

    def target_spread(self):
        """Root mean square of the targets (weighted), 1 when they are all zero."""
        if self.yy > 0 and self.weight > 0:
            return self.y_scale * np.sqrt(self.yy / self.weight)
        return 1.0

    def solve(self):
        out = np.empty(self.size)
        lower_solve(self.L, self.size, self.b, out)
        self.coef_ = out
        return out

    def matrix(self):
        """``A`` rebuilt from the factor (for checks)."""
        L = self.L[: self.size, : self.size]
        return L @ L.T

    def __getstate__(self):
        # Spare capacity is not saved, nor the zeros of the triangles.
        state = self.__dict__.copy()
        G, L = self.G[: self.n_cells, : self.n_cells], self.L[: self.size, : self.size]
        state["G"] = G[np.triu_indices(self.n_cells)]
        state["L"] = L[np.tril_indices(self.size)]
        state["g"] = self.g[: self.n_cells].copy()
        state["cell_column"] = self.cell_column[: self.n_cells].copy()
        state["b"] = self.b[: self.size].copy()
        return state

    def __setstate__(self, state):
        if "G" in state and state["G"].ndim == 1:  # packed triangles
            n, size = state["n_cells"], state["size"]
            G = np.zeros((n, n))
            G[np.triu_indices(n)] = state["G"]
            G += np.triu(G, 1).T
            L = np.zeros((size, size))
            L[np.tril_indices(size)] = state["L"]
            state = dict(state, G=G, L=L)
        if "G" not in state:  # the upper factor of the features, without cells
            size = state["size"]
            L = np.ascontiguousarray(state.pop("U")[:size, :size].T)
            G = L @ L.T
            G[np.diag_indices_from(G)] -= state["alpha"]
            state.update(L=L, G=G, g=state["b"][:size].copy(), n_cells=size,
                         cell_column=np.arange(size, dtype=np.int64), y_scale=0.0, yy=0.0,
                         weight=0.0,
                         max_cells=size)
        self.__dict__.update(state)


def log_marginal_likelihood(L, size, b, coef, yy, weight, alpha):
    """Log marginal likelihood of the Bayesian linear model (unit prior variance,
    noise variance ``alpha``) from the factor ``L`` of ``A``, ``b``, the solution
    ``coef``, ``yy = y^T W y`` and ``weight = sum w`` (the form of ``_sweep``)."""
    bw = float(np.dot(b[:size], coef[:size]))
    coef_sq = float(np.dot(coef[:size], coef[:size]))
    fit_sq = max(yy - bw - alpha * coef_sq, 0.0)
    return (-fit_sq / (2.0 * alpha) - coef_sq / 2.0 - lower_logdet(L, size) / 2.0
            - (weight - size) / 2.0 * np.log(alpha) - weight / 2.0 * np.log(2.0 * np.pi))
