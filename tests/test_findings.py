"""Findings rules on hand-made summaries: every rule fires, and does not fire."""

from __future__ import annotations

from typing import Any

import pytest

from actorprof.analyze.imbalance import imbalance
from actorprof.report import findings as fd


def metrics(loads: list[float]) -> dict[str, Any]:
    return imbalance(loads).to_dict()


def rules(found: list[fd.Finding]) -> list[str]:
    return [f.rule for f in found]


# ------------------------------------------------------------------ hot_pe, balanced, stragglers


def test_hot_pe_fires_with_ratio_and_pe() -> None:
    loads = [459.0] + [49.0] * 9  # mean 90, PE 0 at 5.1x
    found = fd.balance_findings(
        metrics(loads), kind="logical", verb="sends", noun="sends", unit="messages"
    )
    assert rules(found) == ["hot_pe", "stragglers"]
    assert found[0].text.startswith("PE 0 sends 5.1x the mean (459 messages vs a mean of 90)")
    assert found[0].value == pytest.approx(5.1)
    assert found[0].threshold == fd.HOT_PE_RATIO
    assert "stragglers in sends: PE 0" in found[1].text


def test_hot_pe_threshold_is_inclusive_and_sharp() -> None:
    at = {"max_over_mean": 2.0, "max": 20.0, "mean": 10.0, "max_pe": 3, "stragglers": []}
    below = {**at, "max_over_mean": 1.99}
    kw: dict[str, Any] = {"kind": "logical", "verb": "sends", "noun": "sends", "unit": "m"}
    assert rules(fd.balance_findings(at, **kw)) == ["hot_pe"]
    assert rules(fd.balance_findings(below, **kw)) == []


def test_balanced_fires_and_does_not() -> None:
    kw: dict[str, Any] = {
        "kind": "papi",
        "verb": "handles",
        "noun": "messages handled",
        "unit": "m",
    }
    even = fd.balance_findings(metrics([100, 101, 99, 100]), **kw)
    assert rules(even) == ["balanced"]
    assert (
        even[0].text == "messages handled are balanced: the busiest PE (PE 1) is at 1.01x the mean"
    )
    # 1.08x: neither balanced nor hot; PE 1 is a robust outlier but below 1.10x
    assert rules(fd.balance_findings(metrics([100, 108, 96, 96]), **kw)) == []
    # undefined ratio (all zero): no finding at all
    assert fd.balance_findings(metrics([0, 0, 0]), **kw) == []


def test_stragglers_need_a_real_excess() -> None:
    kw: dict[str, Any] = {"kind": "overall", "verb": "takes", "noun": "T_TOTAL", "unit": "c"}
    # PE 0 is a robust outlier (MAD tiny) but only 0.8 % above the mean: not a
    # straggler in the tables either (the same 1.10 floor)
    tiny = metrics([100.8, 100.0, 100.0, 100.01])
    assert tiny["stragglers"] == []
    assert "stragglers" not in rules(fd.balance_findings(tiny, **kw))
    big = metrics([130.0, 100.0, 100.0, 100.0, 100.0])  # 1.18x the mean
    assert rules(fd.balance_findings(big, **kw)) == ["stragglers"]


# ------------------------------------------------------------------ trend


def test_spearman_by_hand() -> None:
    assert fd.spearman([4, 3, 2, 1]) == pytest.approx(-1.0)
    assert fd.spearman([1, 2, 3, 4]) == pytest.approx(1.0)
    # ties get average ranks: [1.5, 1.5, 3, 4] vs [0, 1, 2, 3]
    assert fd.spearman([5, 5, 7, 9]) == pytest.approx(0.9486832980505138)
    assert fd.spearman([3, 3, 3]) is None
    assert fd.spearman([1]) is None


def test_trend_falls_and_rises() -> None:
    falling = [35000, 31000, 35100, 12000, 29000, 11000, 12000, 4000, 15000, 3700, 2500, 900]
    found = fd.trend_findings(falling, kind="logical", noun="receives")
    assert rules(found) == ["trend"]
    assert found[0].text.startswith("receives fall with PE id (Spearman rank correlation -0.")
    assert found[0].value is not None and found[0].value <= -fd.TREND_RHO
    rising = fd.trend_findings(falling[::-1], kind="logical", noun="sends")
    assert rising[0].text.startswith("sends rise with PE id")


def test_trend_does_not_fire() -> None:
    kw: dict[str, Any] = {"kind": "logical", "noun": "receives"}
    assert fd.trend_findings([10, 30, 20, 40, 10, 30, 20, 40], **kw) == []  # no order
    assert fd.trend_findings([6, 5, 4, 3, 2], **kw) == []  # 5 PEs: too few
    # perfectly ordered but a 1 % spread: noise, not a trend
    assert fd.trend_findings([1010, 1008, 1006, 1004, 1002, 1000], **kw) == []
    assert fd.trend_findings([0] * 8, **kw) == []


# ------------------------------------------------------------------ triangular


def test_triangular_lower_and_upper() -> None:
    lower = fd.triangular_findings({"num_pes": 16, "upper": 0, "lower": 170000})
    assert rules(lower) == ["triangular"]
    assert lower[0].text.startswith("the logical matrix is lower-triangular: 100.0 %")
    upper = fd.triangular_findings({"num_pes": 16, "upper": 990, "lower": 10})  # 1 % the other way
    assert upper[0].text.startswith("the logical matrix is upper-triangular: 99.0 %")


def test_triangular_does_not_fire() -> None:
    assert fd.triangular_findings({"num_pes": 8, "upper": 500, "lower": 500}) == []
    assert fd.triangular_findings({"num_pes": 8, "upper": 20, "lower": 980}) == []  # 2 %
    assert fd.triangular_findings({"num_pes": 8, "upper": 0, "lower": 0}) == []  # self only
    assert fd.triangular_findings({"num_pes": 2, "upper": 0, "lower": 10}) == []  # too small


# ------------------------------------------------------------------ overall: time shares, POP


def test_comm_share_on_every_pe() -> None:
    found = fd.time_share_findings(
        {"main": [0.05, 0.06, 0.04], "comm": [0.91, 0.90, 0.92], "proc": [0.04, 0.04, 0.04]},
        {"main": 0.05, "comm": 0.91, "proc": 0.04},
    )
    assert rules(found) == ["time_share"]
    assert found[0].text == "COMM is 91 % of time on every PE (91 % of all T_TOTAL)"
    spread = fd.time_share_findings({"comm": [0.60, 0.98, 0.72, 0.95]})
    assert spread[0].text == "COMM is 60-98 % of time on every PE"
    main = fd.time_share_findings({"main": [0.7, 0.8], "comm": [0.3, 0.2]})
    assert main[0].text.startswith("MAIN is") and main[0].severity == "info"


def test_time_share_does_not_fire() -> None:
    # COMM is the largest part on average, but one PE is below 50 %
    assert fd.time_share_findings({"comm": [0.9, 0.9, 0.45], "main": [0.1, 0.1, 0.55]}) == []
    assert fd.time_share_findings({"comm": [None, None]}) == []


def test_pop_efficiencies() -> None:
    useful = {"max_over_mean": 2.1, "max_pe": 1}
    found = fd.pop_findings(
        {"load_balance": 0.47, "communication_efficiency": 0.39}, useful, scope="label histo"
    )
    assert rules(found) == ["pop_efficiency", "pop_efficiency"]
    assert found[0].text == (
        "POP load balance is 0.47: useful work (MAIN + PROC) is uneven across PEs; "
        "PE 1 does 2.1x the mean (label histo)"
    )
    assert "only 39 % of the run" in found[1].text
    assert fd.pop_findings({"load_balance": 0.8, "communication_efficiency": 0.95}) == []
    assert fd.pop_findings(None) == []


# ------------------------------------------------------------------ data quality


def test_papi_zero_all_and_some() -> None:
    every = fd.papi_findings(["PAPI_TOT_INS", "PAPI_LST_INS"], ["PAPI_TOT_INS", "PAPI_LST_INS"])
    assert every[0].text.startswith(
        "all PAPI counters are zero (PAPI_TOT_INS, PAPI_LST_INS): the tracing machine had no "
        "hardware counters"
    )
    some = fd.papi_findings(["PAPI_TOT_INS", "PAPI_L1_DCM"], ["PAPI_L1_DCM"])
    assert some[0].text.startswith("PAPI counter(s) PAPI_L1_DCM are zero")
    assert fd.papi_findings(["PAPI_TOT_INS"], []) == []


def test_unread_lines_counts_only_unexpected_reasons() -> None:
    coverage = [
        {
            "kind": "logical",
            "path": "run/PE0_send.csv",
            "skipped_unexpected": {"wrong number of fields": 2},
            "first_skipped": [{"line": 7, "reason": "wrong number of fields", "text": "1, 2"}],
        },
        {
            "kind": "logical",
            "path": "run/PE1_send.csv",
            "skipped_unexpected": {"last line cut": 1},
            "first_skipped": [],
        },
        {"kind": "overall", "path": "run/overall.txt", "skipped_unexpected": {}},
    ]
    found = fd.unread_findings(coverage)
    assert rules(found) == ["unread_lines"]
    assert found[0].text == (
        "3 logical trace line(s) could not be read in 2 file(s): 1 last line cut, "
        "2 wrong number of fields; first at run/PE0_send.csv:7"
    )
    assert fd.unread_findings(coverage[2:]) == []


def test_missing_pes() -> None:
    found = fd.missing_pe_findings([2, 3, 4, 9], kind="logical", num_pes=16)
    assert found[0].text == "4 of 16 PEs left nothing in the logical trace: PE 2-4, 9"
    assert fd.missing_pe_findings([], kind="logical", num_pes=16) == []


def test_tcomm_checks() -> None:
    found = fd.tcomm_findings(3, [5])
    assert rules(found) == ["tcomm_checks", "tcomm_checks"]
    assert "3 TCOMM_PROFILING value(s) disagree" in found[0].text
    assert "on PE 5" in found[1].text
    assert fd.tcomm_findings(0, []) == []


def test_empty_trace() -> None:
    found = fd.empty_findings(0, 3)
    assert found[0].rule == "empty_trace" and found[0].severity == "warning"
    assert found[0].text.startswith("the logical trace holds no message (3 file(s) read")
    assert fd.empty_findings(1, 3) == []


def test_mesh() -> None:
    fits = fd.mesh_findings({"pes_per_node": 4, "fits": True})
    assert fits[0].severity == "info" and "fits the Conveyors 2D mesh with 4" in fits[0].text
    broken = fd.mesh_findings({"pes_per_node": 4, "fits": False})
    assert broken[0].severity == "warning" and "does NOT fit" in broken[0].text
    assert fd.mesh_findings(None) == []


# ------------------------------------------------------------------ a whole hand-made report


def hand_report() -> dict[str, Any]:
    sent = [91032, 19129, 22106, 3464, 19491, 3804, 3215, 480]
    received = [43922, 20448, 21184, 7664, 22205, 7545, 8393, 3716]
    return {
        "errors": {"physical": "physical.txt: no trace line"},
        "coverage": [
            {"kind": "overall", "path": "o.txt", "skipped_unexpected": {}, "first_skipped": []}
        ],
        "logical": {
            "phases": {
                "(unnamed)": {
                    "num_pes": 8,
                    "missing_pes": [],
                    "imbalance": {"count": {"sent": metrics(sent), "received": metrics(received)}},
                    "per_pe": {"sent": sent, "received": received},
                    "direction": {"num_pes": 8, "upper": 100, "lower": 100, "diagonal": 5},
                }
            }
        },
        "papi": {
            "phases": {
                "(unnamed)": {
                    "num_pes": 8,
                    "counters": ["PAPI_TOT_INS", "PAPI_LST_INS"],
                    "zero_counters": ["PAPI_TOT_INS", "PAPI_LST_INS"],
                    "imbalance": {"messages": metrics(received)},
                }
            }
        },
        "overall": {
            "num_pes": 8,
            "groups": [
                {
                    "name": "histo",
                    "missing_pes": [],
                    "fractions": {"main": 0.05, "comm": 0.91, "proc": 0.04},
                    "pe_fractions": {"comm": [0.91] * 8},
                    "pop_efficiencies": {"load_balance": 0.9, "communication_efficiency": 0.9},
                    "imbalance": {},
                    "checks": {"disagreements": 0},
                    "runtime_warnings": [],
                }
            ],
        },
        "physical": None,
    }


def test_report_findings_in_severity_order() -> None:
    found = fd.report_findings(hand_report())
    assert [f.severity for f in found] == sorted(
        (f.severity for f in found), key=["error", "warning", "info"].index
    )
    texts = [f.text for f in found]
    assert texts[0].startswith("the physical trace could not be read")
    assert "PE 0 sends 4.5x the mean (91,032 messages vs a mean of 20,340)" in texts
    assert "PE 0 receives 2.6x the mean (43,922 messages vs a mean of 16,885)" in texts
    assert "COMM is 91 % of time on every PE (91 % of all T_TOTAL)" in texts
    assert any(t.startswith("all PAPI counters are zero") for t in texts)
    assert "triangular" not in rules(found)  # symmetric here
    assert set(rules(found)) <= {r["rule"] for r in fd.RULES}


def test_report_findings_on_an_empty_report() -> None:
    assert fd.report_findings({}) == []


def test_aggregation_findings_say_the_models_verdict() -> None:
    from actorprof.report.findings import aggregation_findings

    assert aggregation_findings(None) == []
    one = {"verdict": "one run", "layout": "2d matrix 4 x 4 (n = 4)", "links": 160}
    one |= {"topology": "3d tensor 2 x 2 x 4 (n = 2)", "links_explained": 160}
    found = aggregation_findings(one)
    assert [(f.rule, f.severity) for f in found] == [
        ("aggregation", "info"),
        ("aggregation", "warning"),  # the layout says 2D, the trace shows 3D
    ]
    assert "explains all 160 links" in found[0].text
    bad = aggregation_findings(
        {
            "verdict": "not one run",
            "topology": "1d vector 4 (n = 4)",
            "links": 6,
            "links_explained": 0,
            "reasons": ["2 link(s): x"],
        }
    )
    assert bad[0].severity == "warning" and "not of one run (0 of 6" in bad[0].text
    assert bad[0].value == 6.0
    misfit = aggregation_findings({"verdict": "model does not fit", "notes": ["n"]})
    assert "the run is not blamed" in misfit[0].text
