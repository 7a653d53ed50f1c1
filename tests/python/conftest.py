"""Shared helpers for the fastcsv tests (run against the installed package)."""

import csv
import io

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
