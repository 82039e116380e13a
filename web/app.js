// The dashboard: reads the REST API of the same origin and renders it (no network beyond it).
//
// Every figure shown carries the API's raw number in data-value, and where it came from in
// data-src (the API URL) and data-path (a JSON pointer into its answer), or data-paths (a sum of
// several values) or data-ratio (numerator and denominator): tests/web compare each one with the
// API, and a reader can trace any number back.
"use strict";

(function() {
var SVGNS = "http://www.w3.org/2000/svg";
var WINDOWS = {"7d": "7 days", "28d": "28 days", "month": "this month"};
var PALETTE = [
  "#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e",
  "#9498a0"
];
var SERIES_MAX = 8;  // beyond this many teams or projects a chart sums the rest as "others"

var errBox = document.getElementById("js-errors");
function noteError(text) {
  errBox.textContent += text + "\n";
  document.documentElement.setAttribute(
      "data-js-errors", String(errBox.textContent.split("\n").length - 1));
}
window.addEventListener("error", function(e) {
  noteError("error: " + e.message);
});
window.addEventListener("unhandledrejection", function(e) {
  noteError("rejection: " + e.reason);
});

// ---- state from the URL fragment: #window=28d&token=... (a fragment never reaches a server log)
function fragment() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}
function currentWindow() {
  var w = fragment().get("window");
  return WINDOWS[w] ? w : "7d";
}
// The cost basis: allocation (the default) or usage, shared GPUs split by measured use.
function currentBasis() {
  return fragment().get("basis") === "usage" ? "usage" : "allocation";
}

// ---- elements ---------------------------------------------------------------------------------
function h(tag, attrs) {
  var el = document.createElement(tag);
  setAttrs(el, attrs);
  for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
  return el;
}
function svg(tag, attrs) {
  var el = document.createElementNS(SVGNS, tag);
  setAttrs(el, attrs);
  for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
  return el;
}
function setAttrs(el, attrs) {
  if (!attrs) return;
  Object.keys(attrs).forEach(function(k) {
    if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false)
      el.setAttribute(k, attrs[k]);
  });
}
function append(el, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) {
    c.forEach(function(x) {
      append(el, x);
    });
    return;
  }
  el.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
}
function fill(id) {
  var el = document.getElementById(id);
  el.textContent = "";
  for (var i = 1; i < arguments.length; i++) append(el, arguments[i]);
  return el;
}

// ---- numbers ----------------------------------------------------------------------------------
var currency = "USD";
function cents(v) {
  return Math.round(v * 100) / 100;
}
function grouped(v, digits) {
  return v.toLocaleString("en-US", {minimumFractionDigits: digits, maximumFractionDigits: digits});
}
// Money as docs/report.md writes it: $1,234.56 for USD, 1,234.56 EUR for any other currency.
// Runs fn with money written in cur (a document's own currency), then back to the page's.
function inCurrency(cur, fn) {
  var saved = currency;
  currency = cur || currency;
  try {
    return fn();
  } finally {
    currency = saved;
  }
}
function moneyText(v) {
  if (v === null || v === undefined || !isFinite(v)) return "–";
  var neg = v < 0 ? "−" : "";
  var s = grouped(Math.abs(v), 2);
  return currency === "USD" ? neg + "$" + s : neg + s + " " + currency;
}
function shortMoney(v) {  // axis ticks only: whole units
  var s = grouped(Math.round(v), 0);
  return currency === "USD" ? "$" + s : s + " " + currency;
}
function hoursText(v) {
  return v === null || v === undefined ? "–" : grouped(v, 2);
}
function pctText(v) {
  return v === null || v === undefined || !isFinite(v) ? "–" : grouped(v * 100, 1) + "%";
}

// A figure: text shown, raw value and its source kept in data- attributes.
function fig(tag, text, value, src, path, extra) {
  var a = {
    "class": "num",
    "data-value": value === null || value === undefined ? "null" : String(value),
    "data-src": src,
    "data-path": path
  };
  if (extra)
    Object.keys(extra).forEach(function(k) {
      a[k] = extra[k];
    });
  return h(tag, a, text);
}
function money(tag, v, src, path, shown) {
  return fig(tag, moneyText(shown === undefined ? v : shown), v, src, path);
}
function hours(tag, v, src, path, shown) {
  return fig(tag, hoursText(shown === undefined ? v : shown), v, src, path);
}

// Largest-remainder rounding to the cent (as docs/report.md): the rows shown add up to the
// total shown, each off its exact value by less than a cent.
function roundRows(values, total) {
  var shownTotal = Math.round(Math.abs(total) * 100) * Math.sign(total);
  var floors = values.map(function(v) {
    return Math.floor(v * 100 + 1e-9);
  });
  var sum = floors.reduce(function(a, b) {
    return a + b;
  }, 0);
  var exact = values.reduce(function(a, b) {
    return a + b;
  }, 0);
  if (Math.abs(exact - total) > 1e-6 * Math.max(1, Math.abs(total)) || values.some(function(v) {
        return v < 0;
      }))
    return values.map(cents);
  var order = values
                  .map(function(v, i) {
                    return i;
                  })
                  .sort(function(i, j) {
                    var ri = values[i] * 100 - floors[i], rj = values[j] * 100 - floors[j];
                    return rj - ri || i - j;
                  });
  for (var k = 0; k < order.length && sum < shownTotal; k++, sum++) floors[order[k]]++;
  return floors.map(function(c) {
    return c / 100;
  });
}

// ---- the API ----------------------------------------------------------------------------------
function ApiError(status, message, url) {
  this.status = status;
  this.message = message;
  this.url = url;
}
function api(url, asText) {
  var headers = {"Accept": asText ? "text/markdown" : "application/json"};
  var token = fragment().get("token");
  if (token) headers.Authorization = "Bearer " + token;
  return fetch(url, {headers: headers, credentials: "same-origin", cache: "no-store"})
      .catch(function(e) {
        throw new ApiError(0, "cannot reach the API (" + e.message + ")", url);
      })
      .then(function(r) {
        if (r.ok) return asText ? r.text() : r.json();
        return r.text().then(function(t) {
          var msg = "";
          try {
            msg = JSON.parse(t).error || "";
          } catch (e) {
            msg = t.slice(0, 200);
          }
          throw new ApiError(r.status, msg, url);
        });
      });
}
// A cost answer is {"sets":[summary, ...]} (one per step) or a bare summary.
function sets(doc) {
  return Array.isArray(doc.sets) ? doc.sets : [doc];
}
function setPath(doc, i) {
  return Array.isArray(doc.sets) ? "/sets/" + i : "";
}

function explain(e) {
  if (!(e instanceof ApiError)) return "Unexpected error: " + e;
  if (e.status === 503 && /no data yet/i.test(e.message))
    return "No data yet: the controller has not " +
        "published its first figures. This page tries again every 10 seconds.";
  if (e.status === 503)
    return "The controller cannot answer now (HTTP 503" + (e.message ? ": " + e.message : "") +
        "). This page tries again every 10 seconds.";
  if (e.status === 401)
    return "Not signed in (HTTP 401): this controller checks tokens. Open the page as " +
        location.pathname + "#token=YOUR_TOKEN (see docs/dashboard.md).";
  if (e.status === 403)
    return "Not allowed (HTTP 403): the token’s identity may not read GPU costs" +
        (e.message ? " (" + e.message + ")" : "") + ".";
  if (e.status === 0) return "Cannot reach the controller: " + e.message + ".";
  return "The API answered HTTP " + e.status + (e.message ? ": " + e.message : "") + " for " +
      e.url + ".";
}

// ---- tables -----------------------------------------------------------------------------------
// cols: [{label, num}], rows: arrays of cells (strings or elements). Narrow screens stack the
// cells, each labelled by its column (data-label).
function table(caption, cols, rows, foot) {
  function row(cells, tag) {
    return h("tr", null, cells.map(function(c, i) {
      var cell =
          h(i === 0 && tag === "td" ? "th" : tag, {
            "data-label": cols[i].label,
            "class": cols[i].num ? "n" : null,
            scope: i === 0 && tag === "td" ? "row" : null
          },
            c);
      return cell;
    }));
  }
  // Focusable and named, so a keyboard can scroll it when it is wider than the screen.
  return h(
      "div", {"class": "table", role: "region", tabindex: "0", "aria-label": caption},
      h("table", null, h("caption", null, caption),
        h("thead", null, h("tr", null, cols.map(function(c) {
            return h("th", {scope: "col", "class": c.num ? "n" : null}, c.label);
          }))),
        h("tbody", null, rows.map(function(r) {
          return row(r, "td");
        })),
        foot ? h("tfoot", null, foot.map(function(r) {
          return row(r, "td");
        })) :
               null));
}
function empty(text) {
  return h("p", {"class": "muted empty"}, text);
}
function keyText(v) {
  if (v === "__folded__") return "(folded history)";  // hours that no longer name their pod
  return v === "" || v === null || v === undefined ? "(none)" : v;
}
function shareBar(ratio) {
  var w = Math.max(0, Math.min(1, ratio || 0)) * 100;
  return h(
      "span", {"class": "bar", "aria-hidden": "true"},
      h("span", {style: "width:" + w.toFixed(1) + "%"}));
}

// ---- charts -----------------------------------------------------------------------------------
// Stacked bars of cost per step, one colour per key (top SERIES_MAX keys, the rest summed).
function stackedChart(host, doc, src, dim, title) {
  var ss = sets(doc);
  var totals = {};
  ss.forEach(function(s) {
    (s.groups || []).forEach(function(g) {
      var k = keyText(g.keys[dim]);
      totals[k] = (totals[k] || 0) + g.cost;
    });
  });
  var keys = Object.keys(totals).sort(function(a, b) {
    return totals[b] - totals[a] || (a < b ? -1 : 1);
  });
  var shown = keys.length > SERIES_MAX ? keys.slice(0, SERIES_MAX - 1) : keys;
  var others = keys.length > shown.length ? "others (" + (keys.length - shown.length) + ")" : null;
  var series = shown.concat(others ? [others] : []);
  var color = {};
  series.forEach(function(k, i) {
    color[k] = PALETTE[i % PALETTE.length];
  });

  // Per step: the segments (key, value, paths into the answer) in series order.
  var steps = ss.map(function(s, i) {
    var seg = {};
    (s.groups || []).forEach(function(g, j) {
      var k = keyText(g.keys[dim]);
      if (shown.indexOf(k) < 0) k = others;
      var p = setPath(doc, i) + "/groups/" + j + "/cost";
      if (!seg[k]) seg[k] = {value: 0, paths: []};
      seg[k].value += g.cost;
      seg[k].paths.push(p);
    });
    var start = s.window && s.window.start || "";
    return {
      label: start.slice(0, 10),
      total: s.total ? s.total.cost : 0,
      // a step not starting at midnight UTC (a window up to now) says when it starts
      longLabel: /T00:00:00Z$/.test(start) ? start.slice(0, 10) :
                                             start.replace("T", " ").replace(/:00Z$/, " UTC"),
      totalPath: setPath(doc, i) + "/total/cost",
      seg: seg
    };
  });
  var max = Math.max.apply(
      null,
      steps
          .map(function(s) {
            return s.total;
          })
          .concat([0]));
  host.textContent = "";
  if (!steps.length || max <= 0) {
    append(host, empty("No spend in this window."));
    return;
  }

  var width = Math.max(280, Math.floor(host.clientWidth || 600));
  var height = width < 500 ? 200 : 260;
  var m = {l: width < 500 ? 52 : 70, r: 8, t: 10, b: 28};
  var pw = width - m.l - m.r, ph = height - m.t - m.b;
  var nice = niceMax(max),
      ticks = [5, 10].indexOf(Math.round(nice / Math.pow(10, Math.floor(Math.log10(nice))))) >= 0 ?
      5 :
      4;
  var band = pw / steps.length, bw = Math.max(2, band * 0.75);
  var root =
      svg("svg", {
        width: width,
        height: height,
        viewBox: "0 0 " + width + " " + height,
        role: "img",
        "aria-labelledby": host.id + "-title",
        "class": "stack"
      },
          svg("title", {id: host.id + "-title"}, title));
  for (var t = 0; t <= ticks; t++) {
    var v = nice * t / ticks, y = m.t + ph - ph * v / nice;
    append(root, svg("line", {x1: m.l, x2: width - m.r, y1: y, y2: y, "class": "grid"}));
    append(
        root,
        svg("text", {x: m.l - 6, y: y + 4, "text-anchor": "end", "class": "tick"}, shortMoney(v)));
  }
  var every = Math.ceil(steps.length / Math.max(1, Math.floor(pw / 44)));
  steps.forEach(function(st, i) {
    var x = m.l + band * i + (band - bw) / 2, y0 = m.t + ph;
    var g =
        svg("g", {"class": "step"}, svg("title", null, st.longLabel + ": " + moneyText(st.total)));
    series.forEach(function(k) {
      var sg = st.seg[k];
      if (!sg || sg.value <= 0) return;
      var hgt = ph * sg.value / nice;
      y0 -= hgt;
      var a = {
        x: x.toFixed(2),
        y: y0.toFixed(2),
        width: bw.toFixed(2),
        height: Math.max(0.5, hgt).toFixed(2),
        fill: color[k],
        "data-value": String(sg.value),
        "data-src": src,
        "data-key": k
      };
      if (sg.paths.length === 1)
        a["data-path"] = sg.paths[0];
      else
        a["data-paths"] = sg.paths.join(" ");
      append(
          g,
          svg("rect", a, svg("title", null, st.longLabel + ", " + k + ": " + moneyText(sg.value))));
    });
    append(root, g);
    if (i % every === 0)
      append(
          root,
          svg("text", {
            x: (m.l + band * i + band / 2).toFixed(2),
            y: height - 8,
            "text-anchor": "middle",
            "class": "tick"
          },
              st.label.slice(5)));
  });
  append(host, root);
  append(
      host, h("ul", {"class": "legend"}, series.map(function(k) {
        return h(
            "li", null,
            h("span", {"class": "swatch", style: "background:" + color[k], "aria-hidden": "true"}),
            k);
      })));
  // The same figures as a table, for screen readers and for copying.
  function segFig(sg) {
    if (!sg) return fig("span", moneyText(0), 0, src, null, {"data-paths": ""});
    var extra = sg.paths.length === 1 ? null : {"data-paths": sg.paths.join(" ")};
    return fig(
        "span", moneyText(sg.value), sg.value, src, sg.paths.length === 1 ? sg.paths[0] : null,
        extra);
  }
  append(
      host,
      h("details", null, h("summary", null, "The chart’s figures per day"),
        table(
            title,
            [{label: "Day"}].concat(
                series.map(function(k) {
                  return {label: k, num: true};
                }),
                [{label: "Total", num: true}]),
            steps.map(function(st) {
              return [st.longLabel].concat(
                  series.map(function(k) {
                    return segFig(st.seg[k]);
                  }),
                  [money("span", st.total, src, st.totalPath)]);
            }))));
}
function niceMax(v) {
  var p = Math.pow(10, Math.floor(Math.log10(v))), f = v / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 4 ? 4 : f <= 5 ? 5 : f <= 8 ? 8 : 10) * p;
}

// ---- views ------------------------------------------------------------------------------------
function costUrl(win, by, step) {
  return "api/v1/costs?window=" + win + "&by=" + by + (step ? "&step=" + step : "") +
      (currentBasis() === "usage" ? "&basis=usage" : "");
}

function renderTotals(doc, src, recs, recSrc) {
  var s = sets(doc)[0], p = setPath(doc, 0);
  currency = s.currency || doc.currency || "USD";
  var w = s.window || doc.window || {};
  fill(
      "window-text",
      "From " + (w.start || "?").replace("T", " ").replace("Z", " UTC") + " to " +
          (w.end || "?").replace("T", " ").replace("Z", " UTC"));
  var capCost = s.capacity ? s.capacity.cost : null;
  var cards = [
    [
      "Spend", money("p", s.total.cost, src, p + "/total/cost"),
      h("p", {"class": "sub"},
        fig("span", grouped(s.total.pods, 0), s.total.pods, src, p + "/total/pods"), " pods",
        s.basis === "usage" && s.total.measured_cost !== undefined ?
            [
              ", ", money("span", s.total.measured_cost, src, p + "/total/measured_cost"),
              " of it split by measured use"
            ] :
            null)
    ],
    [
      "GPU-hours", hours("p", s.total.gpu_hours, src, p + "/total/gpu_hours"),
      h("p", {"class": "sub"}, "GPU-equivalent hours held")
    ],
    [
      "Idle capacity", s.idle ? money("p", s.idle.cost, src, p + "/idle/cost") : h("p", null, "–"),
      s.idle && capCost ?
          h("p", {"class": "sub"},
            fig("span", pctText(s.idle.cost / capCost), s.idle.cost / capCost, src, null,
                {"data-ratio": p + "/idle/cost " + p + "/capacity/cost", "data-scale": "100"}),
            " of capacity cost") :
          null
    ],
    [
      "Unattributed",
      s.unattributed ? money("p", s.unattributed.cost, src, p + "/unattributed/cost") :
                       h("p", null, "–"),
      h("p", {"class": "sub"}, "no team or project label")
    ]
  ];
  if (recs && recs.totals && recs.totals.monthly_savings !== undefined)
    cards.push([
      "Savings found",
      inCurrency(
          recs.currency,
          function() {
            return money("p", recs.totals.monthly_savings, recSrc, "/totals/monthly_savings");
          }),
      h("p", {"class": "sub"}, "per month, see Recommendations")
    ]);
  fill("cards", cards.map(function(c) {
    return h("div", {"class": "card"}, h("h3", null, c[0]), c[1], c[2]);
  }));
}

// A table of groups of one summary, rounded so that the rows add up to the total shown.
function groupTable(caption, doc, src, dims, labels, limit) {
  var s = sets(doc)[0], p = setPath(doc, 0), groups = s.groups || [];
  if (!groups.length) return empty("No spend in this window.");
  var total = s.total.cost;
  var cut = limit && groups.length > limit ? limit : groups.length;
  // Rounded as the rows shown: the first `cut` groups and, when cut, the rest as one row.
  var costs = groups.slice(0, cut).map(function(g) {
    return g.cost;
  });
  if (cut < groups.length)
    costs.push(groups.slice(cut).reduce(function(a, g) {
      return a + g.cost;
    }, 0));
  var shownCost = roundRows(costs, total);
  var rows = groups.slice(0, cut).map(function(g, i) {
    var gp = p + "/groups/" + i;
    return dims
        .map(function(d) {
          // Workloads are long Kind/namespace/name strings: they may break anywhere.
          return d === "workload" ? h("span", {"class": "name"}, keyText(g.keys[d])) :
                                    keyText(g.keys[d]);
        })
        .concat([
          hours("span", g.gpu_hours, src, gp + "/gpu_hours"),
          money("span", g.cost, src, gp + "/cost", shownCost[i]),
          h("span", {"class": "share"}, shareBar(total ? g.cost / total : 0),
            fig("span", total ? pctText(g.cost / total) : "–", total ? g.cost / total : null, src,
                null, {"data-ratio": gp + "/cost " + p + "/total/cost", "data-scale": "100"})),
          fig("span", grouped(g.pods, 0), g.pods, src, gp + "/pods")
        ]);
  });
  var cols = labels
                 .map(function(l) {
                   return {label: l};
                 })
                 .concat([
                   {label: "GPU-hours", num: true}, {label: "Cost", num: true},
                   {label: "Share", num: true}, {label: "Pods", num: true}
                 ]);
  var foot = [["Total"]
                  .concat(dims.slice(1).map(function() {
                    return "";
                  }))
                  .concat([
                    hours("span", s.total.gpu_hours, src, p + "/total/gpu_hours"),
                    money("span", total, src, p + "/total/cost"), "",
                    fig("span", grouped(s.total.pods, 0), s.total.pods, src, p + "/total/pods")
                  ])];
  if (cut < groups.length) {
    // The rest in one row, so the table still adds up to its total.
    var rest = groups.slice(cut), idx = rest.map(function(g, i) {
      return cut + i;
    });
    var sum = function(f) {
      return rest.reduce(function(a, g) {
        return a + g[f];
      }, 0);
    };
    var paths = function(f) {
      return idx
          .map(function(i) {
            return p + "/groups/" + i + "/" + f;
          })
          .join(" ");
    };
    var shownRest = shownCost[cut];
    rows.push(["(" + rest.length + " more)"]
                  .concat(dims.slice(1).map(function() {
                    return "";
                  }))
                  .concat([
                    fig("span", hoursText(sum("gpu_hours")), sum("gpu_hours"), src, null,
                        {"data-paths": paths("gpu_hours")}),
                    fig("span", moneyText(shownRest), sum("cost"), src, null,
                        {"data-paths": paths("cost")}),
                    "", ""
                  ]));
  }
  return table(caption, cols, rows, foot);
}

function renderIdle(doc, src) {
  var s = sets(doc)[0], p = setPath(doc, 0);
  var nodes = (s.idle && s.idle.nodes) || [];
  if (!nodes.length) {
    fill("table-idle", empty("No idle GPU time in this window."));
    return;
  }
  var shown = roundRows(
      nodes.map(function(n) {
        return n.cost;
      }),
      s.idle.cost);
  fill(
      "table-idle",
      table(
          "Idle GPU time per node",
          [
            {label: "Node"}, {label: "GPU model"}, {label: "Capacity"},
            {label: "Idle GPU-hours", num: true}, {label: "Cost", num: true}
          ],
          nodes.map(function(n, i) {
            var np = p + "/idle/nodes/" + i;
            return [
              h("span", {"class": "name"}, n.node), n.model, n.capacity_type,
              hours("span", n.gpu_hours, src, np + "/gpu_hours"),
              money("span", n.cost, src, np + "/cost", shown[i])
            ];
          }),
          [[
            "Total", "", "", hours("span", s.idle.gpu_hours, src, p + "/idle/gpu_hours"),
            money("span", s.idle.cost, src, p + "/idle/cost")
          ]]));
}

var TOP_PODS = 10;
function topPods(doc) {
  var s = sets(doc)[0];
  return (s.groups || [])
      .filter(function(g) {
        return g.keys.pod !== "__folded__";
      })
      .slice(0, TOP_PODS);
}
// podDocs: {namespace: {ok: /api/v1/pods?namespace=NS answer} or {err}} for the top pods'
// namespaces: where each runs and, when a usage source covers it, how busy its GPUs were.
function renderPods(doc, src, podDocs) {
  var s = sets(doc)[0], p = setPath(doc, 0), top = topPods(doc);
  if (!top.length) {
    fill("table-pods", empty("No pods held GPUs in this window."));
    return;
  }
  function record(ns, name) {
    var d = podDocs && podDocs[ns] && podDocs[ns].ok, found = null;
    (d && d.pods || []).forEach(function(x, i) {
      if (x.name === name) found = {pod: x, i: i};
    });
    return found;  // the list is by start within a name: the last is the newest
  }
  fill(
      "table-pods",
      table(
          "The ten dearest pods of the window",
          [
            {label: "Pod"}, {label: "Team"}, {label: "Project"}, {label: "GPU model"},
            {label: "Node"}, {label: "GPU activity", num: true}, {label: "GPU-hours", num: true},
            {label: "Cost", num: true}
          ],
          top.map(function(g) {
            var gp = p + "/groups/" + s.groups.indexOf(g), r = record(g.keys.namespace, g.keys.pod);
            var psrc = "api/v1/pods?namespace=" + encodeURIComponent(g.keys.namespace);
            var act = r && r.pod.usage && r.pod.usage.activity_mean !== null &&
                    r.pod.usage.activity_mean !== undefined ?
                fig("span", pctText(r.pod.usage.activity_mean), r.pod.usage.activity_mean, psrc,
                    "/pods/" + r.i + "/usage/activity_mean",
                    {"data-scale": "100", title: "mean over " + r.pod.usage.samples + " samples"}) :
                h("span", {"class": "muted", title: "no usage data for this pod"}, "–");
            return [
              h("span", {"class": "name"}, g.keys.namespace + "/" + g.keys.pod,
                r && r.pod.running ? h("span", {"class": "badge"}, "running") : null),
              keyText(g.keys.team), keyText(g.keys.project), keyText(g.keys.model),
              h("span", {"class": "name"}, r && r.pod.node || "–"), act,
              hours("span", g.gpu_hours, src, gp + "/gpu_hours"),
              money("span", g.cost, src, gp + "/cost")
            ];
          })));
}

var KIND_LABEL = {
  idle_gpu: "Idle GPU",
  over_requested: "Over-requested",
  mig_fit: "Fits a MIG slice",
  cheaper_class: "Cheaper GPU class",
  unattributed: "Unattributed spend",
  idle_capacity: "Idle capacity",
  reserve_floor: "Reserve the floor",
  buy_vs_rent: "Buy vs rent",
  share_fit: "Fits a GPU share"
};
function subjectText(sub) {
  if (!sub || typeof sub !== "object") return sub ? String(sub) : "";
  var parts = [];
  if (sub.pod)
    parts.push((sub.namespace ? sub.namespace + "/" : "") + sub.pod);
  else if (sub.namespace)
    parts.push("namespace " + sub.namespace);
  if (sub.controller) parts.push((sub.controller_kind || "owner") + " " + sub.controller);
  if (sub.team === "__cluster__")
    parts.push("whole cluster");
  else if (sub.team)
    parts.push("team " + sub.team);
  if (sub.project) parts.push("project " + sub.project);
  if (sub.node) parts.push("node " + sub.node);
  if (sub.model)
    parts.push(sub.model + (sub.capacity_type ? " (" + sub.capacity_type + ")" : ""));
  else if (sub.capacity_type)
    parts.push(sub.capacity_type);
  var known = [
    "namespace", "pod", "controller", "controller_kind", "team", "project", "node", "model",
    "capacity_type"
  ];
  Object.keys(sub).forEach(function(k) {
    if (known.indexOf(k) < 0 && sub[k] !== null && typeof sub[k] !== "object")
      parts.push(k + " " + sub[k]);
  });
  return parts.join(", ");
}
function evidenceList(ev, path, src) {
  var items = [];
  function walk(o, p, label) {
    if (o === null || o === undefined) return;
    if (typeof o === "object" && !Array.isArray(o)) {
      Object.keys(o).forEach(function(k) {
        walk(o[k], p + "/" + k, label ? label + "." + k : k);
      });
    } else if (typeof o === "number") {
      var text = /cost|usd|savings/.test(label) ? moneyText(o) :
                                                  grouped(
                                                      o,
                                                      o % 1 === 0            ? 0 :
                                                          Math.abs(o) < 10   ? 3 :
                                                          Math.abs(o) < 1000 ? 1 :
                                                                               0);
      items.push(
          h("div", null, h("dt", null, label.replace(/_/g, " ")), fig("dd", text, o, src, p)));
    } else if (!Array.isArray(o)) {
      items.push(h("div", null, h("dt", null, label), h("dd", null, String(o))));
    }
  }
  walk(ev, path, "");
  return items.length ? h("dl", {"class": "evidence"}, items) : null;
}
function renderRecs(doc, src) {
  var findings = doc.findings || [];
  var host = document.getElementById("recs");
  host.setAttribute("data-count", String(findings.length));
  var head = h(
      "p", {"class": "lead"},
      fig("strong", grouped(findings.length, 0), findings.length, src, null,
          {"data-count-of": "/findings"}),
      findings.length === 1 ? " change" : " changes",
      doc.totals && doc.totals.monthly_savings !== undefined ?
          [
            " would save ",
            money("strong", doc.totals.monthly_savings, src, "/totals/monthly_savings"), " a month."
          ] :
          ".");
  var list = h("ol", {"class": "findings"}, findings.map(function(f, i) {
    var fp = "/findings/" + i;
    var ch = f.change || {};
    return h(
        "li", {"class": "finding", "data-kind": f.kind},
        h("article", null,
          h("h3", null, KIND_LABEL[f.kind] || f.kind,
            h("span", {"class": "subject"}, subjectText(f.subject))),
          h("p", {"class": "saving"},
            money("strong", f.monthly_savings, src, fp + "/monthly_savings"), " a month"),
          ch.summary ? h("p", null, ch.summary) : null,
          ch.stanza ?
              h("pre", {"class": "stanza", tabindex: "0", "aria-label": "The change to make"},
                h("code", null, ch.stanza)) :
              null,
          f.evidence ? h("details", null, h("summary", null, "Evidence"),
                         evidenceList(f.evidence, fp + "/evidence", src)) :
                       null));
  }));
  var byKind = doc.totals && doc.totals.by_kind ?
      Object.keys(doc.totals.by_kind).filter(function(k) {
        return doc.totals.by_kind[k].count > 0;
      }) :
      [];
  var kinds = byKind.length ?
      table(
          "Findings by kind",
          [{label: "Kind"}, {label: "Findings", num: true}, {label: "Saves a month", num: true}],
          byKind.map(function(k) {
            var kp = "/totals/by_kind/" + k;
            return [
              KIND_LABEL[k] || k,
              fig("span", grouped(doc.totals.by_kind[k].count, 0), doc.totals.by_kind[k].count, src,
                  kp + "/count"),
              money("span", doc.totals.by_kind[k].monthly_savings, src, kp + "/monthly_savings")
            ];
          })) :
      null;
  var omitted = doc.findings_omitted ? h("p", {"class": "muted"},
                                         fig("span", grouped(doc.findings_omitted, 0),
                                             doc.findings_omitted, src, "/findings_omitted"),
                                         " more findings are not listed (the totals count them).") :
                                       null;
  var notes = (doc.notes || []).length ? h("ul", {"class": "notes"}, doc.notes.map(function(n) {
    return h("li", null, n);
  })) :
                                         null;
  fill(
      "recs", head, kinds, findings.length ? list : empty("Nothing to change in this window."),
      omitted, notes);
}

function renderReportPick(list, listSrc, rep) {
  var periods = list.periods || [];
  if (!periods.length) {
    fill("report", empty("No weekly report yet: the controller has no spend in any week."));
    return;
  }
  var sel = h("select", {id: "report-pick"}, periods.map(function(x) {
    return h(
        "option", {value: x.id, selected: rep && rep.id === x.id ? "selected" : null},
        x.id + (x.partial ? " (not over)" : ""));
  }));
  sel.addEventListener("change", function() {
    var f = fragment();
    f.set("report", sel.value);
    location.hash = f.toString();
  });
  var pickRow =
      h("p", {"class": "pick"}, h("label", {"for": "report-pick"}, "Week "), sel, " ",
        h("a", {href: listSrc}, "all reports (JSON)"));
  if (!rep) {
    fill("report", pickRow);
    return;
  }
  if (rep.err) {
    fill("report", pickRow, h("p", {"class": "error"}, explain(rep.err)));
    return;
  }
  if (rep.ok.cluster) fill("cluster", rep.ok.cluster);
  inCurrency(rep.ok.currency, function() {
    renderReport(rep.ok, "api/v1/reports/weekly/" + encodeURIComponent(rep.id));
  });
  document.getElementById("report").insertBefore(
      pickRow, document.getElementById("report").firstChild);
}

function renderReport(r, src) {
  var p = r.period || {};
  var parts = [];
  parts.push(h("h3", null, r.title || "Weekly report"));
  if (p.partial)
    parts.push(h(
        "p", {"class": "muted"}, "This week is not over: figures up to " + p.figures_up_to + "."));
  var s = r.summary || {total: {}};
  var change = r.change && r.change.cost !== null && r.change.cost !== undefined ?
      [
        " (",
        fig("span", (r.change.cost >= 0 ? "+" : "") + moneyText(r.change.cost), r.change.cost, src,
            "/change/cost"),
        r.change.percent !== null && r.change.percent !== undefined ?
            [
              ", ",
              fig("span", (r.change.percent >= 0 ? "+" : "") + grouped(r.change.percent, 1) + "%",
                  r.change.percent, src, "/change/percent")
            ] :
            null,
        " from the week before)"
      ] :
      null;
  parts.push(
      h("p", {"class": "lead"}, "Spend ", money("strong", s.total.cost, src, "/summary/total/cost"),
        change, " on ", hours("span", s.total.gpu_hours, src, "/summary/total/gpu_hours"),
        " GPU-hours."));
  function rowsOf(arr, base, first) {
    var shown = roundRows(
        arr.map(function(x) {
          return x.cost;
        }),
        s.total.cost);
    return arr.map(function(x, i) {
      var xp = base + "/" + i;
      return first(x).concat([
        hours("span", x.gpu_hours, src, xp + "/gpu_hours"),
        money("span", x.cost, src, xp + "/cost", shown[i])
      ]);
    });
  }
  var hc = [{label: "GPU-hours", num: true}, {label: "Cost", num: true}];
  function tot() {  // fresh elements for each table: a node lives in one place only
    return [
      hours("span", s.total.gpu_hours, src, "/summary/total/gpu_hours"),
      money("span", s.total.cost, src, "/summary/total/cost")
    ];
  }
  if ((r.by_team || []).length)
    parts.push(
        h("h4", null, "By team"),
        table(
            "Spend by team, " + (p.iso_week || ""), [{label: "Team"}].concat(hc),
            rowsOf(r.by_team, "/by_team", function(x) {
              return [keyText(x.team)];
            }), [["Total"].concat(tot())]));
  if ((r.by_model || []).length)
    parts.push(
        h("h4", null, "By GPU model and capacity type"),
        table(
            "Spend by GPU model and capacity type",
            [{label: "GPU model"}, {label: "Capacity"}].concat(hc),
            rowsOf(r.by_model, "/by_model", function(x) {
              return [keyText(x.model), keyText(x.capacity_type)];
            }), [["Total", ""].concat(tot())]));
  if ((r.by_day || []).length)
    parts.push(
        h("h4", null, "By day"),
        table(
            "Spend per day", [{label: "Day"}].concat(hc), rowsOf(r.by_day, "/by_day", function(x) {
              return [x.date];
            }), [["Total"].concat(tot())]));
  if ((r.idle_nodes || []).length)
    parts.push(
        h("h4", null, "Idle GPUs you pay for"),
        table(
            "Idle GPU time per node, " + (p.iso_week || ""),
            [{label: "Node"}, {label: "GPU model"}, {label: "Capacity"}].concat(hc),
            r.idle_nodes.map(function(n, i) {
              return [
                h("span", {"class": "name"}, n.node), n.model, n.capacity_type,
                hours("span", n.gpu_hours, src, "/idle_nodes/" + i + "/gpu_hours"),
                money("span", n.cost, src, "/idle_nodes/" + i + "/cost")
              ];
            })));
  if (r.unattributed && (r.unattributed.namespaces || []).length)
    parts.push(
        h("h4", null, "Unattributed spend"),
        table(
            "Spend with no team or project, per namespace", [{label: "Namespace"}].concat(hc),
            r.unattributed.namespaces.map(function(n, i) {
              return [
                n.namespace,
                hours("span", n.gpu_hours, src, "/unattributed/namespaces/" + i + "/gpu_hours"),
                money("span", n.cost, src, "/unattributed/namespaces/" + i + "/cost")
              ];
            })));
  if ((r.workloads || []).length) parts.push(h("h4", null, "By workload"), reportWorkloads(r, src));
  if ((r.top_pods || []).length)
    parts.push(
        h("h4", null, "Top pods"),
        table(
            "The week’s dearest pods",
            [{label: "Pod"}, {label: "Team"}, {label: "Project"}].concat(hc),
            r.top_pods.map(function(x, i) {
              return [
                h("span", {"class": "name"}, x.namespace + "/" + x.pod), keyText(x.team),
                keyText(x.project),
                hours("span", x.gpu_hours, src, "/top_pods/" + i + "/gpu_hours"),
                money("span", x.cost, src, "/top_pods/" + i + "/cost")
              ];
            })));
  if ((r.notes || []).length)
    parts.push(h("h4", null, "Notes"), h("ul", {"class": "notes"}, r.notes.map(function(n) {
                 return h("li", null, n);
               })));
  if (r.method) parts.push(h("p", {"class": "muted"}, r.method));
  parts.push(h("p", null, h("a", {href: src + "?format=md"}, "This report as Markdown")));
  fill("report", parts);
}

// The report's workloads as shown, then those it left out and its folded history (which names no
// workload) as one row each, so that the table adds up to the week's total.
function reportWorkloads(r, src) {
  var s = r.summary || {total: {}}, wl = r.workloads.slice(), paths = [];
  wl.forEach(function(x, i) {
    paths.push("/workloads/" + i);
  });
  if (r.workloads_omitted) {
    wl.push({
      workload: "(" + r.workloads_omitted.rows + " more)",
      gpu_hours: r.workloads_omitted.gpu_hours,
      cost: r.workloads_omitted.cost
    });
    paths.push("/workloads_omitted");
  }
  var folded = r.workloads_folded;
  if (folded && (folded.gpu_seconds > 0 || folded.cost > 0)) {
    wl.push({workload: "(folded history)", gpu_hours: folded.gpu_hours, cost: folded.cost});
    paths.push("/workloads_folded");
  }
  var shown = roundRows(
      wl.map(function(x) {
        return x.cost;
      }),
      s.total.cost);
  return table(
      "Spend by workload, " + ((r.period || {}).iso_week || ""),
      [
        {label: "Workload"}, {label: "Team"}, {label: "Project"}, {label: "GPU-hours", num: true},
        {label: "Cost", num: true}
      ],
      wl.map(function(x, i) {
        var more = paths[i].indexOf("/workloads/") !== 0;
        return [
          h("span", {"class": "name"}, more ? x.workload : keyText(x.workload)),
          more ? "" : keyText(x.team), more ? "" : keyText(x.project),
          hours("span", x.gpu_hours, src, paths[i] + "/gpu_hours"),
          money("span", x.cost, src, paths[i] + "/cost", shown[i])
        ];
      }),
      [[
        "Total", "", "", hours("span", s.total.gpu_hours, src, "/summary/total/gpu_hours"),
        money("span", s.total.cost, src, "/summary/total/cost")
      ]]);
}

// The running month (the newest monthly report): spend so far against last month, the
// forecast to its end, and each monthly budget's standing.
function renderMonth(list, listSrc, rep) {
  var periods = list.periods || [];
  if (!periods.length || !rep) {
    fill("month", empty("No monthly report yet: the controller has no spend in any month."));
    return;
  }
  if (rep.err) {
    fill("month", h("p", {"class": "error"}, explain(rep.err)));
    return;
  }
  var r = rep.ok, p = r.period || {}, src = "api/v1/reports/monthly/" + encodeURIComponent(rep.id);
  var s = r.summary || {total: {}};
  var parts = [h("h3", null, r.title || "Monthly report")];
  var change = r.change && r.change.cost !== null && r.change.cost !== undefined ?
      [
        " (",
        fig("span", (r.change.cost >= 0 ? "+" : "") + moneyText(r.change.cost), r.change.cost, src,
            "/change/cost"),
        " against the month before)"
      ] :
      null;
  parts.push(
      h("p", {"class": "lead"}, p.partial ? "Spent so far " : "Spent ",
        money("strong", s.total.cost, src, "/summary/total/cost"), change, "."));
  if (r.forecast)
    parts.push(
        h("p", null, "Forecast to the end of the month: ",
          money("strong", r.forecast.cost, src, "/forecast/cost"), ". ",
          h("span", {"class": "muted"}, r.forecast.how)));
  var budgets = r.budgets || [];
  if (budgets.length) {
    var stateText = {ok: "ok", warn: "warning", over: "over budget"};
    parts.push(table(
        "Spend against the monthly budgets",
        [
          {label: "Budget of"}, {label: "Budget", num: true}, {label: "Spent", num: true},
          {label: "Used", num: true}, {label: "Forecast", num: true}, {label: "State"}
        ],
        budgets.map(function(b, i) {
          var bp = "/budgets/" + i;
          return [
            b.scope + " " + b.name, money("span", b.amount, src, bp + "/amount"),
            money("span", b.spent, src, bp + "/spent"),
            h("span", null,
              fig("span", pctText(b.share), b.share, src, bp + "/share", {"data-scale": "100"}),
              shareBar(Math.min(1, b.share))),
            b.forecast === null || b.forecast === undefined ?
                "–" :
                money("span", b.forecast, src, bp + "/forecast"),
            h("span", {"class": "state-" + b.state},
              (stateText[b.state] || b.state) +
                  (b.forecast_over && b.state !== "over" ? ", forecast over" : ""))
          ];
        })));
  } else {
    parts.push(empty("No monthly budgets are configured (budgets.items)."));
  }
  parts.push(
      h("p", null, h("a", {href: src + "?format=md"}, "This month’s report as Markdown"), " · ",
        h("a", {href: listSrc}, "all monthly reports (JSON)")));
  fill("month", parts);
}

// ---- loading ----------------------------------------------------------------------------------
var generation = 0, retryTimer = null, lastDocs = null, lastSignature = null;
var REFRESH_MS = 60000;  // the controller publishes new figures every few seconds

function showMessage(text) {
  var m = document.getElementById("message");
  m.hidden = !text;
  m.textContent = text || "";
}
function sectionError(id, e) {
  fill(id, h("p", {"class": "error"}, explain(e)));
}

function load(quiet) {
  var win = currentWindow(), gen = ++generation;
  if (retryTimer) {
    clearTimeout(retryTimer);
    retryTimer = null;
  }
  if (quiet !== true) document.documentElement.setAttribute("data-state", "loading");
  document.documentElement.setAttribute("data-window", win);
  Array.prototype.forEach.call(document.querySelectorAll("[data-window]"), function(b) {
    if (b.tagName === "BUTTON")
      b.setAttribute("aria-pressed", String(b.getAttribute("data-window") === win));
  });
  document.documentElement.setAttribute("data-basis", currentBasis());
  Array.prototype.forEach.call(document.querySelectorAll("button[data-basis]"), function(b) {
    b.setAttribute("aria-pressed", String(b.getAttribute("data-basis") === currentBasis()));
  });
  var urls = {
    team: costUrl(win, "team"),
    teamDays: costUrl(win, "team", "1d"),
    projDays: costUrl(win, "project", "1d"),
    proj: costUrl(win, "team,project"),
    workload: costUrl(win, "workload,team,project"),
    pods: costUrl(win, "namespace,pod,team,project,model"),
    recs: "api/v1/recommendations",
    reports: "api/v1/reports/weekly",
    months: "api/v1/reports/monthly",
    dims: "api/v1/dimensions"
  };
  var names = Object.keys(urls);
  Promise
      .all(names.map(function(n) {
        return api(urls[n]).then(
            function(d) {
              return {ok: d};
            },
            function(e) {
              return {err: e};
            });
      }))
      .then(function(res) {
        if (gen !== generation) return;  // a newer window was picked meanwhile
        var docs = {};
        names.forEach(function(n, i) {
          docs[n] = res[i];
        });
        // The weekly report: the one picked (#report=2026-W47), else the latest complete week,
        // else the newest (partial) one the list names.
        var periods = docs.reports.ok && docs.reports.ok.periods || [];
        var want = fragment().get("report");
        var pick = periods.filter(function(x) {
          return x.id === want;
        })[0] ||
            periods.filter(function(x) {
              return x.id === docs.reports.ok.latest;
            })[0] ||
            periods[0];
        var next = pick ? api(urls.report = "api/v1/reports/weekly/" + encodeURIComponent(pick.id))
                              .then(
                                  function(d) {
                                    return {ok: d, id: pick.id};
                                  },
                                  function(e) {
                                    return {err: e};
                                  }) :
                          Promise.resolve(null);
        var namespaces = docs.pods.ok ? topPods(docs.pods.ok)
                                            .map(function(g) {
                                              return g.keys.namespace;
                                            })
                                            .filter(function(ns, i, a) {
                                              return a.indexOf(ns) === i;
                                            }) :
                                        [];
        var podDocs = Promise
                          .all(namespaces.map(function(ns) {
                            return api("api/v1/pods?namespace=" + encodeURIComponent(ns))
                                .then(
                                    function(d) {
                                      return {ok: d};
                                    },
                                    function(e) {
                                      return {err: e};
                                    });
                          }))
                          .then(function(res) {
                            var out = {};
                            namespaces.forEach(function(ns, i) {
                              out[ns] = res[i];
                            });
                            return out;
                          });
        // The newest month (the running one): its report, for spend against budget.
        var month = docs.months.ok && (docs.months.ok.periods || [])[0];
        var monthDoc = month ?
            api(urls.month = "api/v1/reports/monthly/" + encodeURIComponent(month.id))
                .then(
                    function(d) {
                      return {ok: d, id: month.id};
                    },
                    function(e) {
                      return {err: e};
                    }) :
            Promise.resolve(null);
        // The labels kept as dimensions (none from a controller that does not say): by each.
        var labelDims = (docs.dims.ok && docs.dims.ok.dimensions || []).filter(function(d) {
          return d.indexOf("label:") === 0;
        });
        var labelDocs = Promise.all(labelDims.map(function(d) {
          var url = costUrl(win, encodeURIComponent(d));
          return api(url).then(
              function(x) {
                return {dim: d, url: url, ok: x};
              },
              function(e) {
                return {dim: d, url: url, err: e};
              });
        }));
        return Promise.all([next, podDocs, monthDoc, labelDocs]).then(function(two) {
          var rep = two[0];
          if (gen !== generation) return;
          docs.report = rep;
          docs.month = two[2];
          docs.podRecords = {ok: two[1]};
          docs.labels = {ok: two[3]};
          // A refresh that brings nothing new leaves the page (open details, focus) as it is.
          var signature = JSON.stringify(docs, function(k, v) {
            return v instanceof ApiError ? {status: v.status} : v;
          });
          if (quiet === true && signature === lastSignature) return;
          lastSignature = signature;
          lastDocs = {urls: urls, docs: docs};
          render(urls, docs);
        });
      });
}

function render(urls, docs) {
  // One banner for the whole page when the API as such refuses (no data yet, no token).
  var errs = Object.keys(docs)
                 .map(function(n) {
                   return (docs[n] || {}).err;
                 })
                 .filter(Boolean);
  var global = errs.filter(function(e) {
    return e.status === 503 || e.status === 401 || e.status === 403 || e.status === 0;
  })[0];
  if (global && docs.team.err) {
    showMessage(explain(global));
    ["cards", "chart-team", "table-team", "chart-project", "table-project", "table-workload",
     "table-labels", "table-idle", "table-pods", "recs", "month", "report"]
        .forEach(function(id) {
          fill(id);
        });
    document.documentElement.setAttribute("data-state", "error");
    document.documentElement.setAttribute("data-error-status", String(global.status));
    if (global.status === 503 || global.status === 0) retryTimer = setTimeout(load, 10000);
    recordLayout();
    return;
  }
  showMessage("");
  document.documentElement.removeAttribute("data-error-status");
  function section(name, id, fn) {
    var d = docs[name];
    if (d.err) {
      sectionError(id, d.err);
      return;
    }
    try {
      fn(d.ok);
    } catch (e) {
      noteError("render " + name + ": " + e);
      sectionError(id, e);
    }
  }
  section("team", "cards", function(d) {
    renderTotals(d, urls.team, docs.recs.ok, urls.recs);
    if (d.sets && d.sets[0] && d.sets[0].cluster) fill("cluster", d.sets[0].cluster);
  });
  section("teamDays", "chart-team", function(d) {
    stackedChart(
        document.getElementById("chart-team"), d, urls.teamDays, "team", "Cost per day by team");
  });
  section("team", "table-team", function(d) {
    fill(
        "table-team",
        groupTable("Spend by team over the window", d, urls.team, ["team"], ["Team"]));
  });
  section("projDays", "chart-project", function(d) {
    stackedChart(
        document.getElementById("chart-project"), d, urls.projDays, "project",
        "Cost per day by project");
  });
  section("proj", "table-project", function(d) {
    fill(
        "table-project",
        groupTable(
            "Spend by team and project over the window", d, urls.proj, ["team", "project"],
            ["Team", "Project"], 20));
  });
  section("workload", "table-workload", function(d) {
    fill(
        "table-workload",
        groupTable(
            "Spend by workload over the window", d, urls.workload, ["workload", "team", "project"],
            ["Workload", "Team", "Project"], 20));
  });
  section("labels", "table-labels", function(d) {
    renderLabels(d);
  });
  section("team", "table-idle", function(d) {
    renderIdle(d, urls.team);
  });
  section("pods", "table-pods", function(d) {
    renderPods(d, urls.pods, docs.podRecords && docs.podRecords.ok);
  });
  section("recs", "recs", function(d) {
    inCurrency(d.currency, function() {
      renderRecs(d, urls.recs);
    });
  });
  section("months", "month", function(d) {
    inCurrency((docs.month && docs.month.ok || {}).currency || currency, function() {
      renderMonth(d, urls.months, docs.month);
    });
  });
  section("reports", "report", function(d) {
    renderReportPick(d, urls.reports, docs.report);
  });
  document.documentElement.setAttribute("data-state", "ready");
  recordLayout();
}

// One table per label kept as a dimension; the section shows only when there is one.
function renderLabels(list) {
  document.getElementById("by-label").hidden = !list.length;
  fill("table-labels", list.map(function(x) {
    var key = x.dim.slice("label:".length);
    return h(
        "div", {"class": "label-table", "data-dim": x.dim}, h("h3", null, key),
        x.err ? h("p", {"class": "error"}, explain(x.err)) :
                groupTable(
                    "Spend by label " + key + " over the window", x.ok, x.url, [x.dim], [key], 20));
  }));
}

// Layout facts for tests and for anyone checking the page fits a phone.
function recordLayout() {
  var de = document.documentElement;
  de.setAttribute("data-scroll-width", String(de.scrollWidth));
  de.setAttribute("data-inner-width", String(window.innerWidth));
}

Array.prototype.forEach.call(document.querySelectorAll("button[data-window]"), function(b) {
  b.addEventListener("click", function() {
    var f = fragment();
    f.set("window", b.getAttribute("data-window"));
    location.hash = f.toString();
  });
});
Array.prototype.forEach.call(document.querySelectorAll("button[data-basis]"), function(b) {
  b.addEventListener("click", function() {
    var f = fragment();
    if (b.getAttribute("data-basis") === "usage")
      f.set("basis", "usage");
    else
      f.delete("basis");
    location.hash = f.toString();
  });
});
window.addEventListener("hashchange", function() {
  load();
});
setInterval(function() {
  if (!document.hidden && document.documentElement.getAttribute("data-state") === "ready")
    load(true);
}, REFRESH_MS);
var resizeTimer = null, lastWidth = window.innerWidth;
window.addEventListener("resize", function() {
  if (window.innerWidth === lastWidth) return;
  lastWidth = window.innerWidth;
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(function() {
    if (lastDocs) render(lastDocs.urls, lastDocs.docs);
  }, 150);
});
load();
})();
