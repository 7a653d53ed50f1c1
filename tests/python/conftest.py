"""Shared helpers for the fastcsv tests (run against the installed package)."""

import csv
import io
import os

import fastcsv
import pytest
from hypothesis import HealthCheck, settings

# `pytest --hypothesis-profile=deep` for a longer differential run.
settings.register_profile("default", max_examples=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


def drain(rdr, max_errors=5, before_step=None):
    """Everything a reader produces: rows, and errors as tuples, continuing
    after errors the way a tolerant caller would. Also records line_num
    after each step. `before_step(i)` is called before the i-th step."""
    out = []
    errors = 0
    step = 0
    while True:
        if before_step is not None:
            before_step(step)
        step += 1
        try:
            row = next(rdr)
        except StopIteration:
            break
        except (csv.Error, ValueError) as e:
            out.append(("error", type(e).__name__, str(e), rdr.line_num))
            errors += 1
            if errors >= max_errors:
                break
            continue
        out.append((row, rdr.line_num))
    return out


@pytest.fixture
def limit():
    """Restores the shared field_size_limit after a test."""
    old = fastcsv.field_size_limit()
    yield
    fastcsv.field_size_limit(old)


def stdlib_rows(text, **kw):
    return drain(csv.reader(io.StringIO(text, newline=""), **kw))


# A skipped test is an untested feature. Where every optional package is
# installed (scripts/test.sh sets FASTCSV_NO_SKIP=1; CI sets CI=true), a run
# that skips anything, at collection or in a test, fails.
def _skips_fail():
    if os.environ.get("FASTCSV_NO_SKIP", "") not in ("", "0"):
        return True
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


_skipped = []


def _note_skip(report):
    why = report.longrepr
    if isinstance(why, tuple):  # (path, line, "Skipped: reason")
        why = why[2]
    _skipped.append(f"{report.nodeid}: {why}")


def pytest_collectreport(report):
    if report.skipped:
        _note_skip(report)


def pytest_runtest_logreport(report):
    # An expected failure (xfail) is reported as skipped with `wasxfail`.
    if report.skipped and not hasattr(report, "wasxfail"):
        _note_skip(report)


def pytest_terminal_summary(terminalreporter):
    if _skipped and _skips_fail():
        terminalreporter.write_line(
            f"{len(_skipped)} skipped, which fails this run (FASTCSV_NO_SKIP or CI "
            "is set: install what the skipped tests need):", red=True)
        for s in _skipped:
            terminalreporter.write_line(f"  {s}", red=True)


def pytest_sessionfinish(session, exitstatus):
    if _skipped and _skips_fail() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
