"""Test-wide settings: under CI (``CI`` set) hypothesis draws the same examples every run,
so whether a submission lands does not depend on luck; locally every run explores anew."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
