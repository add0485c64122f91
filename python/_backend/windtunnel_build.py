"""The package's build backend: maturin, after a check that Rust is installed.

Without cargo, maturin's backend would download and install a Rust toolchain (hundreds of MB) and
compile for many minutes without saying so. Building windtunnel from source needs Rust; a machine
without it installs a prebuilt wheel instead (python/README.md).
"""

import shutil

import maturin

NO_RUST = (
    "windtunnel's Python package builds a Rust extension from source, and this machine has no {missing} "
    "on PATH. Either install Rust (https://rustup.rs: `curl --proto '=https' -sSf https://sh.rustup.rs | sh`, "
    "then open a new shell) and run pip again, or install a prebuilt wheel, which needs no Rust: "
    "`pip install windtunnel-<version>-cp39-abi3-<platform>.whl` (build one on a machine with Rust with "
    "`cd python && maturin build --release`; python/README.md)."
)


def _require_rust():
    missing = [tool for tool in ("cargo", "rustc") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(NO_RUST.format(missing=" and ".join(missing)))


def get_requires_for_build_wheel(config_settings=None):
    _require_rust()
    return maturin.get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _require_rust()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _require_rust()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_editable(config_settings=None):
    _require_rust()
    return maturin.get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    _require_rust()
    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _require_rust()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


# A source distribution needs no compiler.
get_requires_for_build_sdist = maturin.get_requires_for_build_sdist
build_sdist = maturin.build_sdist
