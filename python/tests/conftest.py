import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def golden():
    """The committed TransformerLens dumps (golden/tl/)."""
    return ROOT / "golden" / "tl"
