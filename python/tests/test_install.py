"""Installing from source on a machine without Rust stops at once with a message naming what to
install, instead of maturin downloading a Rust toolchain and compiling for many minutes."""

import os
import pathlib
import subprocess
import sys

PACKAGE = pathlib.Path(__file__).resolve().parents[1]


def test_pip_install_without_rust_names_what_to_install(tmp_path):
    # PATH with this interpreter's directory only: pip and maturin are there, cargo is not.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP"))}
    env["PATH"] = str(pathlib.Path(sys.executable).parent)
    env["HOME"] = str(tmp_path)  # nor a ~/.cargo to fall back on
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--dry-run", str(PACKAGE)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "no cargo and rustc on PATH" in text, text
    assert "https://rustup.rs" in text and "prebuilt wheel" in text, text
    assert "Installing Rust" not in text and "Compiling" not in text, text


def test_the_installed_package_says_its_version():
    import windtunnel as wt

    assert wt.__version__ == "0.1.0"


def test_ctrl_c_interrupts_a_long_trajectory():
    import signal
    import time

    code = (
        # Python leaves SIGINT ignored when it starts ignored (a test run in the background of a
        # non-interactive shell, as `.ci/run &`): install the interactive handler, as a terminal has.
        "import signal, sys, windtunnel as wt\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "print('started', flush=True)\n"
        "wt.trajectory(1_000_000, dtype='f32')\n"  # days of steps: only Ctrl-C ends it
        "print('finished', flush=True)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(2)  # inside the step loop by now (not a timed assertion: only when the signal lands)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    assert "KeyboardInterrupt" in err and "interrupted at step" in err, err
    assert "finished" not in out
