"""The dashboard in headless Chromium against the real `gpu-cost-controller --demo` (and, for the
error states only, against the fake API): it loads without JavaScript errors, every figure it
shows is the API's value, it fits a 375 px phone, and it says why when the API refuses."""

import json
import math
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import READY, REPO, open_dashboard

WINDOWS = ["7d", "28d", "month"]
DOCS = REPO / "docs"

# Every element carrying a figure, as the page rendered it.
FIGURES_JS = """Array.from(document.querySelectorAll('[data-value][data-src]')).map(e => ({
  text: e.textContent.trim(), value: e.getAttribute('data-value'), src: e.getAttribute('data-src'),
  path: e.getAttribute('data-path'), paths: e.getAttribute('data-paths'),
  ratio: e.getAttribute('data-ratio'), countOf: e.getAttribute('data-count-of'),
  scale: e.getAttribute('data-scale'),
  tag: e.tagName.toLowerCase(), section: (e.closest('section') || {}).id || ''}))"""


def texts(page, selector, prop="textContent"):
    """A property of every element selector matches, in document order."""
    return page.eval("Array.from(document.querySelectorAll(%r)).map(e => e.%s)" % (selector, prop))


def pointer(doc, path):
    """The value at a JSON pointer (RFC 6901) in doc."""
    cur = doc
    for part in path.split("/")[1:] if path else []:
        part = part.replace("~1", "/").replace("~0", "~")
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]
    return cur


def shown_number(text):
    """The number a figure shows ("$1,234.56", "12.5%", "−$3.00", "+7.6%", "1,234.56 EUR")."""
    m = re.search(r"[−+-]?[$€£]?\s?[0-9][0-9,]*(\.[0-9]+)?", text)
    assert m, "no number in %r" % text
    s = m.group(0)
    neg = s.startswith(("−", "-"))
    digits = re.sub(r"[^0-9.]", "", s)
    decimals = len(m.group(1)) - 1 if m.group(1) else 0
    v = float(digits)
    return (-v if neg else v), decimals


def check_figures(page, server):
    """Compares every figure on the page with the API answer it names; returns how many."""
    figs = page.eval(FIGURES_JS)
    answers = {}
    for src in sorted({f["src"] for f in figs}):
        answers[src] = server.json(src)
    for f in figs:
        doc = answers[f["src"]]
        where = "%s %s %s" % (f["section"], f["src"], f["path"] or f["paths"] or f["ratio"])
        if f["value"] == "null":
            continue
        value = float(f["value"])
        if f["path"]:
            want = pointer(doc, f["path"])
            assert value == float(want), "%s: page %r, API %r" % (where, f["value"], want)
        elif f["paths"] is not None:  # a sum; empty when nothing was spent
            want = sum(float(pointer(doc, p)) for p in f["paths"].split())
            assert math.isclose(value, want, rel_tol=1e-12, abs_tol=1e-9), where
        elif f["ratio"]:
            num, den = (float(pointer(doc, p)) for p in f["ratio"].split())
            assert math.isclose(value, num / den, rel_tol=1e-12), where
        elif f["countOf"]:
            assert value == len(pointer(doc, f["countOf"])), where
        else:
            raise AssertionError("%s: a figure with no source path" % where)
        if f["tag"] in ("rect",):
            continue  # chart segments show their figure in a tooltip only
        shown, decimals = shown_number(f["text"])
        value *= float(f["scale"] or 1)  # a fraction shown as a percentage
        assert abs(shown - value) <= 10 ** -decimals + 1e-9, \
            "%s: shows %r for %r" % (where, f["text"], f["value"])
    return len(figs)


def assert_clean(page):
    assert page.errors == [], "JavaScript errors: %s" % page.errors
    assert page.network_errors == [], "failed loads: %s" % page.network_errors
    assert page.eval("document.getElementById('js-errors').textContent") == ""
    assert page.eval("document.documentElement.dataset.state") == "ready", \
        page.eval("document.getElementById('message').textContent")


def served_index():
    """web/index.html as the build serves it: style.css and app.js inlined."""
    html = (REPO / "web" / "index.html").read_text()
    css = (REPO / "web" / "style.css").read_text()
    js = (REPO / "web" / "app.js").read_text()
    html = html.replace('<link rel="stylesheet" href="style.css">', "<style>\n" + css + "</style>")
    return html.replace('<script src="app.js"></script>', "<script>\n" + js + "</script>").encode()


def test_assets_served_from_the_binary(demo):
    for name, ctype in (("app.js", "text/javascript"), ("style.css", "text/css")):
        status, headers, body = demo.get("/" + name)
        assert status == 200, name
        assert headers["Content-Type"].startswith(ctype), headers["Content-Type"]
        assert body == (REPO / "web" / name).read_bytes(), "%s differs from web/%s" % (name, name)
    for path in ("/", "/index.html"):
        status, headers, body = demo.get(path)
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert body == served_index()
        # Revalidation by ETag: the page is marked no-cache, so browsers ask every time.
        status, _, body = demo.get(path, {"If-None-Match": headers["ETag"]})
        assert status == 304 and body == b""


def test_script_is_formatted():
    """web/app.js keeps the style web/.clang-format describes (`clang-format -i web/app.js`)."""
    r = subprocess.run(["clang-format", "--dry-run", "--Werror", str(REPO / "web" / "app.js")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]


def test_one_document_then_only_the_api(browser, demo):
    """The page needs "/" and /api/v1 only: what the reader ClusterRole grants in path mode."""
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    urls = page.eval("performance.getEntriesByType('resource').map(e => e.name)")
    assert urls, "no requests seen"
    others = [u for u in urls if not u.startswith(demo.base + "api/v1/")]
    assert others == []


@pytest.mark.parametrize("window", WINDOWS)
def test_every_figure_is_the_api_value(browser, demo, window):
    # The demo's clock stands still, so the page and this test read the same figures; were it to
    # move, a mismatch below would say nothing about the page, hence this check first.
    now = demo.json("api/v1/pods?limit=1")["now"]
    page = open_dashboard(browser, demo.base + "#window=" + window)
    assert_clean(page)
    assert page.eval("document.documentElement.dataset.window") == window
    n = check_figures(page, demo)
    assert n > 100, "only %d figures on the page" % n
    assert demo.json("api/v1/pods?limit=1")["now"] == now, "the demo's snapshot moved meanwhile"

    # The headline and the team table, by name, against the API's own answer.
    summary = demo.json("api/v1/costs?window=%s&by=team" % window)
    spend = page.eval("document.querySelector('#cards .card p.num').getAttribute('data-value')")
    assert float(spend) == summary["total"]["cost_usd"]
    names = texts(page, "#table-team tbody th")
    costs = texts(page, '#table-team tbody td[data-label="Cost"] [data-value]', "dataset.value")
    want = [[g["keys"]["team"] or "(none)", g["cost_usd"]] for g in summary["groups"]]
    assert [[t, float(v)] for t, v in zip(names, costs)] == want
    assert len(want) >= 3
    # Every table with a total: its rounded rows add up to its rounded total, as in the reports
    # (docs/report.md); the project table, cut to 20 rows, sums the rest in one more row.
    tables = page.eval("""Array.from(document.querySelectorAll('table')).filter(t =>
        t.querySelector('tfoot td[data-label="Cost"]')).map(t => ({caption: t.caption.textContent,
        rows: Array.from(t.querySelectorAll('tbody td[data-label="Cost"]')).map(c => c.textContent),
        total: t.querySelector('tfoot td[data-label="Cost"]').textContent}))""")
    assert len(tables) >= 5, [t["caption"] for t in tables]
    for t in tables:
        got = sum(round(shown_number(c)[0] * 100) for c in t["rows"])
        assert got == round(shown_number(t["total"])[0] * 100), t["caption"]


@pytest.mark.parametrize("window", WINDOWS)
def test_workload_table_matches_the_api(browser, demo, window):
    """Spend by workload: the 20 dearest (workload, team, project) groups, the rest in one row."""
    page = open_dashboard(browser, demo.base + "#window=" + window)
    assert_clean(page)
    doc = demo.json("api/v1/costs?window=%s&by=workload,team,project" % window)
    groups = doc["groups"]
    assert groups, "no spend in the demo's window"
    label = {"": "(none)", "__folded__": "(folded history)"}
    want = [[label.get(g["keys"]["workload"], g["keys"]["workload"]), g["cost_usd"]]
            for g in groups[:20]]
    names = texts(page, "#table-workload tbody th")
    costs = texts(page, '#table-workload tbody td[data-label="Cost"] [data-value]',
                  "dataset.value")
    assert [[t, float(v)] for t, v in zip(names, costs)][:len(want)] == want
    if len(groups) > 20:
        assert names[20] == "(%d more)" % (len(groups) - 20)
        assert abs(float(costs[20]) - sum(g["cost_usd"] for g in groups[20:])) < 1e-6
    assert len(names) == min(len(groups), 21)
    total = page.eval("document.querySelector('#table-workload tfoot td[data-label=\"Cost\"] "
                      "[data-value]').dataset.value")
    assert float(total) == doc["total"]["cost_usd"]
    src = page.eval("document.querySelector('#table-workload [data-src]').dataset.src")
    assert "by=workload,team,project" in src


def test_label_section_hidden_without_label_dimensions(browser, demo):
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    assert demo.json("api/v1/dimensions")["label_keys"] == []
    assert page.eval("document.getElementById('by-label').hidden") is True


@pytest.mark.parametrize("window", WINDOWS)
def test_label_tables_match_the_api(browser, labelled_demo, window):
    """Spend by label: a table per label kept as a dimension, each figure the API's."""
    page = open_dashboard(browser, labelled_demo.base + "#window=" + window)
    assert_clean(page)
    assert page.eval("document.getElementById('by-label').hidden") is False
    assert check_figures(page, labelled_demo) > 100
    for dim in ("label:cost-center", "label:app"):
        doc = labelled_demo.json("api/v1/costs?window=%s&by=%s" % (window, dim))
        sel = '#table-labels [data-dim="%s"]' % dim
        names = texts(page, sel + " tbody th")
        costs = texts(page, sel + ' tbody td[data-label="Cost"] [data-value]', "dataset.value")
        want = [[g["keys"][dim], g["cost_usd"]] for g in doc["groups"][:20]]
        assert [[t, float(v)] for t, v in zip(names, costs)][:len(want)] == want
        assert len(want) >= 2, dim
    assert "cc-4410" in texts(page, '#table-labels [data-dim="label:cost-center"] tbody th')


def test_recommendations_match_the_api(browser, demo):
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    doc = demo.json("api/v1/recommendations")
    assert doc["findings"], "the demo's advisor found nothing (no usage data in examples/?)"
    shown = page.eval("document.querySelectorAll('#recs li.finding').length")
    assert shown == len(doc["findings"])
    assert page.eval("document.getElementById('recs').dataset.count") == str(len(doc["findings"]))
    kinds = texts(page, "#recs li.finding", "dataset.kind")
    assert kinds == [f["kind"] for f in doc["findings"]]
    stanzas = texts(page, "#recs pre.stanza")
    assert stanzas == [f["change"]["stanza"] for f in doc["findings"] if f["change"].get("stanza")]


def test_weekly_report_matches_the_api(browser, demo):
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    listing = demo.json("api/v1/reports/weekly")
    assert listing["periods"], "the demo has no weekly report"
    picked = listing["latest"] or listing["periods"][0]["id"]
    rep = demo.json("api/v1/reports/weekly/" + picked)
    assert page.eval("document.getElementById('report-pick').value") == picked
    assert page.eval("document.querySelector('#report h3').textContent") == rep["title"]
    teams = texts(page, "#report .table:first-of-type tbody th")
    assert teams == [t["team"] or "(none)" for t in rep["by_team"]]
    # By workload: the report's rows, then those it left out and its folded history, if any.
    assert rep["workloads"], "the demo's weekly report lists no workload"
    want = [w["workload"] or "(none)" for w in rep["workloads"]]
    if "workloads_omitted" in rep:
        want.append("(%d more)" % rep["workloads_omitted"]["rows"])
    if rep["workloads_folded"]["cost_usd"] > 0:
        want.append("(folded history)")
    caption = "Spend by workload, " + rep["period"]["iso_week"]
    got = page.eval("""Array.from(document.querySelectorAll('#report table')).filter(t =>
        t.caption.textContent === %s).map(t => Array.from(t.querySelectorAll('tbody th'))
        .map(c => c.textContent))""" % json.dumps(caption))
    assert got == [want]


def test_month_and_budgets_match_the_api(browser, demo):
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    listing = demo.json("api/v1/reports/monthly")
    assert listing["periods"], "the demo has no monthly report"
    month = listing["periods"][0]["id"]
    rep = demo.json("api/v1/reports/monthly/" + month)
    assert page.eval("document.querySelector('#month h3').textContent") == rep["title"]
    # The running month: its forecast with the method, and every monthly budget's row.
    assert rep["period"]["partial"] and rep["forecast"]
    assert rep["forecast"]["how"] in page.eval("document.getElementById('month').textContent")
    assert rep["budgets"], "examples/config.json has monthly budgets"
    rows = texts(page, "#month tbody tr")
    assert len(rows) == len(rep["budgets"])
    states = {"ok": "ok", "warn": "warning", "over": "over budget"}
    for row, b in zip(rows, rep["budgets"]):
        assert row.startswith("%s %s" % (b["scope"], b["name"])), row
        assert states[b["state"]] in row, (row, b)
        assert ("forecast over" in row) == (b["forecast_over"] and b["state"] != "over"), row


def wait_for(page, js, timeout=30):
    deadline = time.monotonic() + timeout
    while not page.eval("!!(" + js + ")"):
        assert time.monotonic() < deadline, "not within %ss: %s" % (timeout, js)
        time.sleep(0.1)


def test_window_buttons(browser, demo):
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    for window, label in (("28d", "28 days"), ("month", "This month"), ("7d", "7 days")):
        page.eval("Array.from(document.querySelectorAll('button'))"
                  ".find(b => b.textContent === %r).click(), 0" % label)
        wait_for(page, "document.documentElement.dataset.window === %r && "
                       "document.documentElement.dataset.state === 'ready'" % window)
        assert page.eval("location.hash") == "#window=" + window
        pressed = texts(page, 'button[data-window][aria-pressed="true"]')
        assert pressed == [label]
        spend = page.eval("document.querySelector('#cards .card p.num').dataset.value")
        api = demo.json("api/v1/costs?window=%s&by=team" % window)
        assert float(spend) == api["total"]["cost_usd"]
    page.drain()
    assert page.errors == [] and page.network_errors == []


def test_basis_switch(browser, demo):
    """"By measured use" asks the API for the usage basis: the same total, and the example's
    time-sliced GPUs, shared by pods of different teams with different measured use, move
    spend between teams; the Spend card says how much of it measured use decided."""
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    page.eval("document.querySelector('button[data-basis=\"usage\"]').click(), 0")
    wait_for(page, "document.documentElement.dataset.basis === 'usage' && "
                   "document.documentElement.dataset.state === 'ready'")
    assert "basis=usage" in page.eval("location.hash")
    assert texts(page, 'button[data-basis][aria-pressed="true"]') == ["By measured use"]
    spend = float(page.eval("document.querySelector('#cards .card p.num').dataset.value"))
    alloc = demo.json("api/v1/costs?window=7d&by=team")
    usage = demo.json("api/v1/costs?window=7d&by=team&basis=usage")
    assert spend == usage["total"]["cost_usd"]
    assert abs(usage["total"]["cost_usd"] - alloc["total"]["cost_usd"]) < 1e-6
    moved = {g["keys"]["team"]: g["cost_usd"] for g in usage["groups"]}
    held = {g["keys"]["team"]: g["cost_usd"] for g in alloc["groups"]}
    assert any(abs(moved[t] - held.get(t, 0)) >= 0.01 for t in moved), \
        "the example's measured shared GPUs move no spend between teams"
    assert "split by measured use" in page.eval(
        "document.querySelector('#cards .card .sub').textContent")
    # Back to allocation: the fragment loses basis, the page asks without it.
    page.eval("document.querySelector('button[data-basis=\"allocation\"]').click(), 0")
    wait_for(page, "document.documentElement.dataset.basis === 'allocation' && "
                   "document.documentElement.dataset.state === 'ready'")
    assert "basis" not in page.eval("location.hash")
    page.drain()
    assert page.errors == [] and page.network_errors == []


def test_structure_for_assistive_technology(browser, demo):
    page = open_dashboard(browser, demo.base)
    assert_clean(page)
    facts = page.eval("""(() => {
      const all = s => Array.from(document.querySelectorAll(s));
      const levels = all('h1,h2,h3,h4,h5,h6').map(e => +e.tagName[1]);
      return {
        lang: document.documentElement.lang,
        title: document.title,
        h1: document.querySelectorAll('h1').length,
        skips: levels.filter((l, i) => i > 0 && l > levels[i - 1] + 1).length,
        sectionsWithoutHeading: Array.from(document.querySelectorAll('main section')).filter(s =>
          !s.querySelector('h2') ||
          s.getAttribute('aria-labelledby') !== s.querySelector('h2').id).length,
        tables: document.querySelectorAll('table').length,
        tablesWithoutCaption: Array.from(document.querySelectorAll('table')).filter(t =>
          !t.caption || !t.caption.textContent.trim()).length,
        colHeadersWithoutScope: document.querySelectorAll('thead th:not([scope="col"])').length,
        rowHeadersWithoutScope: document.querySelectorAll('tbody th:not([scope="row"])').length,
        charts: document.querySelectorAll('svg').length,
        chartsWithoutTitle: Array.from(document.querySelectorAll('svg')).filter(v =>
          v.getAttribute('role') !== 'img' || !v.querySelector(':scope > title') ||
          v.getAttribute('aria-labelledby') !== v.querySelector(':scope > title').id).length,
        barsWithoutTitle: document.querySelectorAll('svg rect:not(:has(> title))').length,
        buttonsWithoutName: all('button').filter(b => !b.textContent.trim()).length,
        pressed: all('button[data-window]').map(b => b.getAttribute('aria-pressed')),
      };
    })()""")
    assert facts["lang"] == "en" and facts["title"] and facts["h1"] == 1
    assert facts["skips"] == 0, "a heading level is skipped"
    assert facts["sectionsWithoutHeading"] == 0
    assert facts["tables"] >= 8 and facts["tablesWithoutCaption"] == 0
    assert facts["colHeadersWithoutScope"] == 0 and facts["rowHeadersWithoutScope"] == 0
    assert facts["charts"] == 2 and facts["chartsWithoutTitle"] == 0
    assert facts["barsWithoutTitle"] == 0
    assert facts["buttonsWithoutName"] == 0
    assert facts["pressed"] == ["true", "false", "false"]


def test_no_horizontal_scroll(browser, demo):
    """A 375 px phone above all, and the widths between it and a desktop."""
    for window, width in [(w, 375) for w in WINDOWS] + [("28d", 700), ("28d", 1024)]:
        page = open_dashboard(browser, demo.base + "#window=" + window, width=width, height=900)
        assert_clean(page)
        inner = page.eval("window.innerWidth")
        assert inner == width
        assert page.eval("document.documentElement.scrollWidth") <= inner
        # Opened, the evidence and the charts' tables fit too; and no element sticks out to the
        # right (scrollWidth misses what an overflow: hidden box clips).
        page.eval("document.querySelectorAll('details').forEach(d => { d.open = true; }), 0")
        assert page.eval("document.documentElement.scrollWidth") <= inner
        wide = page.eval("""Array.from(document.querySelectorAll('body *')).filter(e =>
            e.getBoundingClientRect().right > window.innerWidth + 0.5 && e.getClientRects().length
            && !(e.closest('.table') && e.closest('.table') !== e && window.innerWidth > 640))
            .map(e => e.tagName + '.' + e.className).slice(0, 5)""")
        if width <= 640:
            # On a phone the tables stack: nothing scrolls sideways, not even inside its box.
            assert page.eval("Array.from(document.querySelectorAll('.table')).filter(t => "
                             "t.scrollWidth > t.clientWidth).length") == 0
        assert wide == []


def test_screenshots(browser, demo, tmp_path):
    """Takes the screenshots; docs/ keeps them only with UPDATE_SCREENSHOTS=1."""
    update = os.environ.get("UPDATE_SCREENSHOTS") == "1"
    for name, width, height in (("dashboard.png", 1280, 1800), ("dashboard-narrow.png", 375, 1600)):
        page = open_dashboard(browser, demo.base, width=width, height=height)
        assert_clean(page)
        out = (DOCS if update else tmp_path) / name
        page.screenshot(str(out), width, height)
        data = out.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == width
        assert int.from_bytes(data[20:24], "big") == height


# ---- the error states, against the fake API (the real controller cannot be held in them) ---------

@pytest.mark.parametrize("status,words", [
    (503, "No data yet"), (401, "Not signed in"), (403, "Not allowed"), (500, "HTTP 500")])
def test_api_errors_are_explained(browser, fake, status, words):
    srv = fake("--status", str(status))
    page = open_dashboard(browser, srv.base)
    assert page.errors == [], page.errors
    state = page.eval("document.documentElement.dataset.state")
    message = page.eval("document.getElementById('message').textContent")
    if status == 500:
        # Not an API-wide refusal: each section says what went wrong.
        assert state == "ready"
        assert words in page.eval("document.getElementById('cards').textContent")
    else:
        assert state == "error"
        assert words in message
        assert page.eval("document.getElementById('message').hidden") is False
        assert page.eval("document.querySelectorAll('[data-value]').length") == 0


def test_findings_rendered(browser, fake):
    """The findings view on a document of every shape the page handles (null stanza and coverage,
    a kind with no findings, notes), recorded in tests/web/fixtures/recommendations.json."""
    srv = fake()
    doc = srv.json("api/v1/recommendations")
    assert len(doc["findings"]) == 3
    for width in (1280, 375):
        page = open_dashboard(browser, srv.base, width=width)
        assert_clean(page)
        assert page.eval("document.querySelectorAll('#recs li.finding').length") == 3
        stanzas = texts(page, "#recs pre.stanza")
        assert stanzas == [f["change"]["stanza"] for f in doc["findings"]]
        card = texts(page, "#cards .card p.num", "dataset.value")[-1]
        assert float(card) == doc["totals"]["monthly_savings"]
        assert check_figures(page, srv) > 100
        assert page.eval("document.documentElement.scrollWidth") <= width


def test_other_currency(browser, fake, tmp_path):
    """Money in the catalog's currency, as the reports write it: 1,234.56 EUR."""
    catalog = json.loads((REPO / "examples" / "prices.json").read_text())
    catalog["currency"] = "EUR"
    (tmp_path / "prices.json").write_text(json.dumps(catalog))
    srv = fake("--prices", str(tmp_path / "prices.json"))
    assert srv.json("api/v1/costs?window=7d&by=team")["currency"] == "EUR"
    page = open_dashboard(browser, srv.base)
    assert_clean(page)
    shown = texts(page, '#table-team td[data-label="Cost"] [data-value]')
    assert shown and all(re.fullmatch(r"[0-9,]+\.[0-9]{2} EUR", t) for t in shown), shown
    assert page.eval("document.querySelector('#cards .card p.num').textContent").endswith(" EUR")
    # The findings document names its own currency (USD in the recording): its figures use it.
    assert page.eval("document.querySelector('#recs .saving strong').textContent").startswith("$")
    check_figures(page, srv)


def test_empty_cluster(browser, fake):
    """Windows before the example cluster's first pod: every section says there is nothing."""
    srv = fake("--now", "2026-09-15T00:00:00Z")
    assert srv.json("api/v1/costs?window=28d&by=team")["groups"] == []
    for window in WINDOWS:
        page = open_dashboard(browser, srv.base + "#window=" + window)
        assert_clean(page)
        for section in ("chart-team", "table-team", "chart-project", "table-project",
                        "table-workload", "table-pods", "report"):
            text = page.eval("document.getElementById(%r).textContent" % section)
            assert text.startswith("No "), (section, text)
        assert page.eval("document.querySelector('#cards .card p.num').textContent") == "$0.00"
        check_figures(page, srv)


def test_token_from_the_fragment(browser, fake):
    srv = fake("--token", "s3cret")
    page = open_dashboard(browser, srv.base)
    assert page.eval("document.documentElement.dataset.errorStatus") == "401"
    page = open_dashboard(browser, srv.base + "#token=s3cret&window=28d")
    assert_clean(page)
    assert page.eval("document.querySelectorAll('#table-team tbody tr').length") > 0


def test_behind_a_proxy_that_adds_the_token(browser, fake):
    """As the controller with --auth-delegate: every path needs the token. A proxy adding the
    header (here the browser itself, told to) is all the page needs, and it asks nothing else."""
    srv = fake("--token", "s3cret", "--token-everywhere")
    assert srv.get("/")[0] == 401
    page = browser.open_page(srv.base, 1280, 900, READY,
                             extra_headers={"Authorization": "Bearer s3cret"})
    assert_clean(page)
    assert check_figures(page, srv.with_headers({"Authorization": "Bearer s3cret"})) > 100
