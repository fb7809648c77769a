"""The contender registry of the equal-budget harness under the examples' name
(its home before it moved into the package): `openspiel_cfrx.contenders`'
names, and the harness's (`openspiel_cfrx.eval.harness`) it used to hold."""

from openspiel_cfrx.contenders import (  # noqa: F401
    CONTENDERS,
    DEEP_CFR_HARNESS_SCHEDULE,
    DEEP_CFR_HARNESS_SETTINGS,
    NFSP_LEDUC_DEFAULTS,
    NFSP_PRESETS,
    make_contender,
    nfsp_settings,
    openspiel_deep_cfr_iteration,
    register_contender,
)
from openspiel_cfrx.eval.harness import Contender, TimedPoint, log_times, run_timed  # noqa: F401
