"""The type stub matches the extension module (mypy.stubtest)."""

import importlib.util
import subprocess
import sys


def test_stubtest():
    if importlib.util.find_spec("mypy") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "mypy"], check=True)
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "fastcsv"],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Success" in out.stdout
