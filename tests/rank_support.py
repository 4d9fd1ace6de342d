"""Measurements as the verifier stores them, for ranking tests: a median with the spread of a real timing
(IQR 1 % of the median over 100 trials, against eager on the largest configuration), so a test between two
of them can tell a real difference from noise."""

from __future__ import annotations

from db.labels import Measurement


def measured(device: str, us: float | None, speedup: float | None = None, *, baseline: str = "eager",
             config: str = "large", iqr_share: float = 0.01, trials: int = 100) -> Measurement:
    return Measurement(device, us, speedup, baseline=baseline, config=config,
                       iqr_us=us * iqr_share if us else None, trials=trials)


def stored_timing(median_us: float, *, spread: float = 0.01, trials: int = 50, baseline: str = "eager",
                  config: str = "large") -> dict:
    """An evaluation's stored timing blob with its trials: evenly spread ±`spread` around the median."""
    samples = [median_us * (1 + spread * (2 * k / (trials - 1) - 1)) for k in range(trials)]
    return {"timed_config": config, "baseline_name": baseline,
            "candidate": {"median_us": median_us, "iqr_us": median_us * spread, "mean_us": median_us,
                          "min_us": samples[0], "trials": trials, "samples_us": samples}}
