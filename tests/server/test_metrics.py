"""server/metrics.py's registry and the Grafana dashboard built on it (server/deploy/grafana-dashboard.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from server.metrics import Metrics

DASHBOARD = Path(__file__).resolve().parents[2] / "server" / "deploy" / "grafana-dashboard.json"


def exported_series() -> set[str]:
    """Every series name a server's /metrics may carry (a labelled family shows none before its first use)."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",), "info": ("_info",)}
    return {family.name + suffix for family in Metrics().registry.collect()
            for suffix in suffixes.get(family.type, ("",))}


def test_the_dashboard_queries_only_series_the_server_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    series = exported_series()
    queried = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\b(?:ftr|process|python)_[a-z_]+", target["expr"])}
    assert queried, "no query found"
    assert queried <= series, queried - series
    ftr = {name.removesuffix("_bucket") for name in queried if name.startswith("ftr_")}
    # Every family of the server's own is on a panel (histograms by their buckets or count).
    own = {family.name for family in Metrics().registry.collect() if family.name.startswith("ftr_")}
    shown = {name for name in own if any(q == name or q.startswith(name + "_") for q in ftr | queried)}
    assert shown == own, own - shown


def test_counters_have_no_created_series() -> None:
    metrics = Metrics()
    metrics.matches.inc()
    names = {sample.name for family in metrics.registry.collect() for sample in family.samples}
    assert "ftr_matches_created_total" in names
    assert not [name for name in names if name.endswith("_created")]
