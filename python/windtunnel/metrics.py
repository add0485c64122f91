"""A run's metrics: ``metrics.jsonl`` as records, or as a pandas DataFrame when pandas is present."""
from __future__ import annotations

import json
import os
from typing import Any, Union

PathLike = Union[str, "os.PathLike[str]"]


def metrics(run: PathLike) -> list:
    """The records of a run directory's metrics.jsonl (or of that file), one dict per line."""
    path = os.fspath(run)
    if os.path.isdir(path):
        path = os.path.join(path, "metrics.jsonl")
    with open(path, encoding="utf-8") as f:
        records = []
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{i}: not a JSON record ({e.msg})") from None
    return records


def metrics_frame(run: PathLike) -> Any:
    """``metrics(run)`` as a pandas DataFrame indexed by step (needs pandas)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("metrics_frame needs pandas (pip install pandas); metrics() gives the records without it") from None
    return pd.DataFrame.from_records(metrics(run)).set_index("step")
