"""Pacejka tyre formulas against CommonRoad's tire_model (arsim_core.dynamics.tyre)."""

from __future__ import annotations

import numpy as np
import pytest

from arsim_core.dynamics import FULL_SCALE
from arsim_core.dynamics import tyre as tyre_formulas
from arsim_core.dynamics.params import pack

tm = pytest.importorskip('vehiclemodels.utils.tire_model')


def test_formulas_match_commonroad() -> None:
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2

    cr = parameters_vehicle2().tire
    p = pack(FULL_SCALE)
    rng = np.random.default_rng(3)
    for kappa, alpha, gamma, f_z in zip(rng.uniform(-1.5, 1.5, 2000), rng.uniform(-1.2, 1.2, 2000),
                                        np.r_[np.zeros(1000), rng.uniform(-0.1, 0.1, 1000)],
                                        rng.uniform(100.0, 8000.0, 2000), strict=True):
        f0_x = tyre_formulas.longitudinal(kappa, gamma, f_z, p)
        assert f0_x == pytest.approx(tm.formula_longitudinal(kappa, gamma, f_z, cr), rel=1e-12)
        f0_y, mu_y = tyre_formulas.lateral(alpha, gamma, f_z, p)
        ref_y, ref_mu = tm.formula_lateral(alpha, gamma, f_z, cr)
        assert (f0_y, mu_y) == pytest.approx((ref_y, ref_mu), rel=1e-12)
        assert tyre_formulas.longitudinal_combined(kappa, alpha, f0_x, p) == pytest.approx(
            tm.formula_longitudinal_comb(kappa, alpha, f0_x, cr), rel=1e-12, abs=1e-9)
        assert tyre_formulas.lateral_combined(kappa, alpha, gamma, mu_y, f_z, f0_y, p) == \
            pytest.approx(tm.formula_lateral_comb(kappa, alpha, gamma, mu_y, f_z, f0_y, cr),
                          rel=1e-12, abs=1e-9)
