"""The result of ``verify``."""
from __future__ import annotations

from typing import Any, Optional


class Report:
    """What ``verify`` found. ``bool(report)`` is whether everything matched; ``str(report)`` is
    the CLI's report (the first divergence, then every tensor in forward-graph order)."""

    def __init__(self, passed: bool, js: dict, text: str, short: str) -> None:
        self.passed: bool = passed
        self.json: dict = js
        self._text, self._short = text, short

    @property
    def first_divergence(self) -> Optional[str]:
        """The first tensor, in the order the forward pass computes them (then gradients in
        backward order), that differs; everything before it agrees."""
        return self.json["first_divergence"]

    @property
    def criterion(self) -> str:
        return self.json["criterion"]

    @property
    def rows(self) -> list:
        """One dict per compared tensor: name, shape, max_abs, max_rel, norm_rel, pass, note."""
        return self.json["tensors"]

    @property
    def failed(self) -> int:
        return self.json["failed"]

    @property
    def compared(self) -> int:
        return self.json["compared"]

    @property
    def missing(self) -> list:
        """Tensors of the reference that the other side lacks."""
        return self.json["missing_in_other"]

    def row(self, name: str) -> dict:
        for r in self.rows:
            if r["name"] == name:
                return r
        raise KeyError(name)

    def failures(self) -> str:
        """The diagnosis line, the failing rows and the count."""
        return self._short

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        fd: Any = self.first_divergence
        return f"<Report passed={self.passed} compared={self.compared} failed={self.failed} first_divergence={fd!r}>"
