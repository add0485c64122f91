# Type stubs of the Rust extension (python/native/src/lib.rs). A tensor crosses the boundary as
# (name, dtype, shape, little-endian bytes); windtunnel/_tensors.py turns them into numpy arrays.
# tests/test_typing.py checks that these names are exactly the module's.
import os
from typing import List, Optional, Sequence, Tuple, Union

PathLike = Union[str, os.PathLike]
RawTensor = Tuple[str, str, List[int], bytes]

ARITHMETIC: int

def read(path: PathLike) -> Tuple[List[RawTensor], Optional[str]]: ...
def write(path: PathLike, tensors: Sequence[RawTensor], metadata: Optional[str] = None) -> None: ...
def data(config: Optional[PathLike] = None, sets: Sequence[str] = ...) -> Tuple[List[RawTensor], str]: ...
def batch(
    size: int, seed: int, config: Optional[PathLike] = None, sets: Sequence[str] = ...
) -> List[RawTensor]: ...
def init(
    init: Optional[str], dtype: str, config: Optional[PathLike] = None, sets: Sequence[str] = ...
) -> Tuple[List[RawTensor], str]: ...
def reference(
    tensors: Sequence[RawTensor],
    dtype: str,
    hooks: bool = True,
    config: Optional[PathLike] = None,
    sets: Sequence[str] = ...,
    metadata: Optional[str] = None,
) -> Tuple[List[RawTensor], str]: ...
def trajectory(
    steps: int,
    dtype: str,
    init: Optional[str] = None,
    params: Optional[Sequence[RawTensor]] = None,
    every: Optional[int] = None,
    config: Optional[PathLike] = None,
    sets: Sequence[str] = ...,
) -> Tuple[List[RawTensor], str]: ...
def verify(
    reference: Sequence[RawTensor],
    other: Sequence[RawTensor],
    preset: Optional[str] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    keys: Sequence[str] = ...,
    exclude: Sequence[str] = ...,
    rename: Sequence[Tuple[str, str]] = ...,
    label: str = "other",
) -> Tuple[bool, str, str, str]: ...
def main(argv: Sequence[str]) -> int: ...
