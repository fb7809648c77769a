"""The short-axis reductions equal numpy's."""

import numpy as np
import pytest

from openspiel_cfrx.rows import row_dot, row_max, row_min, row_sum


@pytest.mark.parametrize("shape", [(5, 1), (7, 3), (4, 6, 2), (3, 8), (2, 40), (6, 0)])
def test_rows_equal_numpy(shape):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=shape), rng.normal(size=shape)
    assert np.array_equal(row_sum(x), x.sum(axis=-1))
    assert np.array_equal(row_sum(x, keepdims=True), x.sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(row_dot(x, y), np.einsum("...a,...a->...", x, y), rtol=1e-12, atol=1e-14)
    if shape[-1]:
        assert np.array_equal(row_max(x), x.max(axis=-1))
        assert np.array_equal(row_min(x, keepdims=True), x.min(axis=-1, keepdims=True))
