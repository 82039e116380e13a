"""The e2e tests hold whatever the weekday, hour, month and year they run in.

The replay is planned relative to `now` (sim.py: an anchor on the hour eight days before), and
the tests choose the periods they ask about from the truth and `now` (periods.py; the replayed
month of test_finance.py). What each test asserts about its own truth (which periods are
complete, what they hold) is checked here, with no API server, at fixed moments: every three
hours of two weeks, both sides of every UTC midnight of a week, and the ends of months and a
year (in UTC and in the finance test's zones), from the plan's record (sim.plan_record), which
test_sim.py checks against a real replay's record. A Saturday-morning run once failed because a
test took the last complete ISO week for one that holds the replay's cost-center pods.
"""

import calendar
import datetime
import json

import pytest

import e2e_truth as truth
import harness
import periods
import sim
import test_finance as finance

H, DAY = 3600, 86400
MONDAY = calendar.timegm((2026, 11, 30, 0, 0, 0))


def _moments():
    out = [MONDAY + k * 3 * H + 17 * 60 for k in range(14 * 8)]
    for d in range(7):
        out += [MONDAY + d * DAY - 30, MONDAY + d * DAY + 30]
    for when in ("2026-11-30T23:59:50Z", "2026-12-01T00:00:10Z", "2026-12-31T23:59:30Z",
                 "2027-01-01T00:00:30Z", "2027-01-01T01:10:00Z", "2027-02-28T23:30:00Z",
                 "2027-03-01T00:20:00Z", "2027-03-28T01:30:00Z", "2027-10-31T00:40:00Z",
                 "2026-11-28T05:26:15Z"):
        out.append(truth.utc(when))
    return out


MOMENTS = _moments()
CFG = json.loads(harness.CONFIG.read_text())


def _label(now):
    return "%s (%s)" % (datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
                        .strftime("%a %Y-%m-%d %H:%M:%S"), now)


@pytest.mark.parametrize("now", MOMENTS, ids=_label)
def test_replay_periods_hold_what_tests_assert(now):
    record = sim.plan_record(now)
    t = truth.Truth(record, CFG)
    days, weeks = t.complete_days(now), t.complete_weeks(now)
    # test_api_live.py, test_controller.py, test_sim.py: eight complete periods at least, the
    # last complete week stepped by day, three complete days, seven for the simulator.
    assert len(days) + len(weeks) >= 8 and weeks and len(days) >= 7, (days, weeks)
    # test_api_live.py::test_api_by_label_equals_truth: cc-4410 holds GPUs in the span.
    start, end = periods.complete_day_span(t, now)
    assert "cc-4410" in periods.label_costs(t, record, "cost-center", start, end)
    # test_controller.py::check_names_in_api: every kind in the complete weeks.
    assert periods.week_workload_kinds(t, now) == {"Deployment", "Job", "CronJob"}
    # test_sim.py: the teams and projects of the complete days.
    groups = set()
    for _, s, e in days:
        groups |= {g for g, v in t.window(s, e)["groups"].items() if v["gpu_seconds"] > 0}
    assert {g[0] for g in groups} >= {"vision", "language", "ads", "data-eng", "platform",
                                      truth.UNATTRIBUTED}
    assert {("data-eng", "cc-4410"), ("vision", "notebooks"),
            ("language", "llm-pretrain")} <= groups
    # Every complete period holds GPU time (no report of an empty period is asked about).
    for name, s, e in days + weeks:
        assert t.window(s, e)["total"]["gpu_seconds"] > 0, name


@pytest.mark.parametrize("zone,need_dst", [("Europe/Berlin", True), ("Asia/Kathmandu", False)])
@pytest.mark.parametrize("now", MOMENTS, ids=_label)
def test_replayed_month_holds_what_finance_asserts(now, zone, need_dst):
    y, m = finance.pick_month(zone, now, need_dst)
    pods = finance.plan_pods(zone, y, m, now)
    ms, me = finance.month_bounds(zone, y, m)
    assert me <= now
    for name, _, s, e in pods:
        # No pod starts or finishes in the future: the replay writes history.
        assert s < now and (e is None or e < now), (name, s, e)
    t = finance.Truth(pods)
    # The pods planned around the month's edges and its odd day all hold GPU time in it.
    assert set(t.per_pod(ms, me, now)) >= {"edge-start", "edge-end", "long-day", "odd-seconds"}
    # The team's budget: set below the running month's spend, so it is over and forecast over.
    cs, ce = finance.month_bounds(zone, *finance.month_of(zone, now))
    spent = t.cost(cs, ce, now)
    amount = finance.budget_amount(spent)
    assert 0 < amount < spent, (spent, amount)
