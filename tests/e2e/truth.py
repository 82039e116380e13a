"""Ground truth for the end-to-end tests: what the controller's reports must say, computed from
what the simulator wrote (sim.Replay.record()), never from anything the controller produced.

The accounting rules are those of the offline ground truth in tests/cli/truth.py (node
classification, price catalog lookup, MIG shares, time-slice replicas, effective requests,
attribution order), reused from that file. What this file adds is the live part, as
docs/controller.md states it:

  - a pod holds its GPU-equivalents from its PodScheduled time until its end: the latest
    container finishedAt for a pod that finished (or whose containers all stopped before it was
    deleted), the deletionTimestamp for a pod deleted while holding them; a pod that still
    holds them accrues up to `now` (or the window's end);
  - a node's capacity runs from its creationTimestamp until it was deleted;
  - idle per node and window = max(0, capacity - what pods held on it), at the node's price;
  - periods are UTC days and ISO weeks (Monday 00:00 UTC); a period is complete when it ended
    before `now`;
  - a window's figures are per team and project (GPU-seconds, cost, pods), per pod and per
    workload (GPU-seconds, cost; pods per workload): a pod's workload is the Deployment, Job or
    CronJob the replay made it through (kube-controller-manager made the pod), else the pod.
"""

import calendar
import datetime
import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DAY = 86400
WEEK = 7 * DAY


def _load_cli_truth():
    # Loaded under its own name: tests/cli/truth.py and this file are both "truth" on disk.
    spec = importlib.util.spec_from_file_location("gpu_cost_cli_truth",
                                                  REPO / "tests" / "cli" / "truth.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


cli = _load_cli_truth()
UNATTRIBUTED = cli.UNATTRIBUTED


def floor_day(t):
    return int(t) // DAY * DAY


def iso_week_start(t):
    """Monday 00:00 UTC of the ISO week holding t (1970-01-01 was a Thursday)."""
    d = floor_day(t)
    return d - ((d // DAY + 3) % 7) * DAY


def day_name(start):
    return "gpu-cost-report-daily-" + datetime.datetime.fromtimestamp(
        start, datetime.timezone.utc).strftime("%Y-%m-%d")


def week_name(start):
    y, w, _ = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).isocalendar()
    return "gpu-cost-report-weekly-%04d-w%02d" % (y, w)


def utc(s):
    return calendar.timegm(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timetuple())


class Usage:
    __slots__ = ("name", "node", "geq", "start", "end", "team", "project", "price", "workload")

    def __init__(self, name, node, geq, start, end, team, project, price, workload):
        self.name, self.node, self.geq = name, node, geq
        self.start, self.end = start, end
        self.team, self.project, self.price = team, project, price
        self.workload = workload


class Truth:
    """record: {"nodes": [{"object", "deleted_at"}], "namespaces": [ns objects],
    "pods": [{"namespace", "name", "labels", "spec", "node", "bound", "end", "workload"
    (absent for a bare pod), ...}]}.

    exclude(pod_record) -> True leaves a pod out (one the controller cannot have seen, e.g.
    deleted before it first listed)."""

    def __init__(self, record, config, exclude=None):
        self.cfg = cli.Config(config)
        self.nodes = {}
        for n in record["nodes"]:
            alloc = (n["object"].get("status") or {}).get("allocatable") or {}
            if not any(cli.is_gpu_resource(k, self.cfg) and cli.parse_quantity(v) > 0
                       for k, v in alloc.items()):
                continue  # not a GPU node: no capacity, no price
            node = cli.Node(n["object"], self.cfg)
            if node.alloc_geq > 0:
                node.deleted_at = n.get("deleted_at")
                self.nodes[node.name] = node
        ns_labels = {ns["metadata"]["name"]: ns["metadata"].get("labels") or {}
                     for ns in record["namespaces"]}
        self.usages = []
        for p in record["pods"]:
            if p.get("node") is None or p.get("bound") is None:
                continue
            if exclude is not None and exclude(p):
                continue
            req = cli.effective_request(p["spec"], self.cfg)
            if not req:
                continue
            node = self.nodes.get(p["node"])
            if node is None:
                raise ValueError("pod %s/%s holds GPUs on %s, not a GPU node" % (
                    p["namespace"], p["name"], p["node"]))
            geq = sum(n * node.unit_share(r, self.cfg) for r, n in req.items())
            nsl = ns_labels.get(p["namespace"], {})
            team = cli.attribute(p["labels"], nsl, p["namespace"], self.cfg.team_keys,
                                 self.cfg.ns_teams)
            project = cli.attribute(p["labels"], nsl, p["namespace"], self.cfg.project_keys,
                                    self.cfg.ns_projects)
            # The workload the replay created the pod through (a Deployment, Job or CronJob
            # of kube-controller-manager's), named as docs/workloads.md says from what the
            # replay created, never from the controller; a bare pod is its own.
            workload = p.get("workload") or "Pod/%s/%s" % (p["namespace"], p["name"])
            self.usages.append(Usage("%s/%s" % (p["namespace"], p["name"]), node.name, geq,
                                     int(p["bound"]), None if p.get("end") is None
                                     else int(p["end"]), team, project, node.price, workload))

    def first_time(self):
        times = [u.start for u in self.usages] + [n.created for n in self.nodes.values()]
        return min(times)

    def window(self, start, end, now=None):
        """Costs over [start, end): by (team, project), total, unattributed, capacity, idle
        per node, and per pod ("namespace/name") and per workload. Pods still holding GPUs
        accrue to min(end, now)."""
        stop = end if now is None else min(end, now)
        groups = {}
        total = {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0}
        unattr = {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0}
        held, pods, workloads = {}, {}, {}
        for u in self.usages:
            e = stop if u.end is None else min(u.end, end)
            sec = max(0, e - max(u.start, start))
            if sec <= 0:
                continue
            gs = u.geq * sec
            cost = gs / 3600.0 * u.price
            accs = [groups.setdefault((u.team, u.project),
                                      {"gpu_seconds": 0.0, "cost_usd": 0.0, "pods": 0}), total]
            if UNATTRIBUTED in (u.team, u.project):
                accs.append(unattr)
            for acc in accs:
                acc["gpu_seconds"] += gs
                acc["cost_usd"] += cost
                acc["pods"] += 1
            for acc in (pods.setdefault(u.name, {"gpu_seconds": 0.0, "cost_usd": 0.0}),
                        workloads.setdefault(u.workload, {"gpu_seconds": 0.0, "cost_usd": 0.0,
                                                          "pods": 0})):
                acc["gpu_seconds"] += gs
                acc["cost_usd"] += cost
            workloads[u.workload]["pods"] += 1
            held[u.node] = held.get(u.node, 0.0) + gs
        cap = {"gpu_seconds": 0.0, "cost_usd": 0.0}
        idle = {"gpu_seconds": 0.0, "cost_usd": 0.0}
        idle_nodes = {}
        for n in self.nodes.values():
            ne = stop if n.deleted_at is None else min(n.deleted_at, end)
            sec = max(0, ne - max(start, n.created))
            cs = n.alloc_geq * sec
            ids = max(0.0, cs - held.get(n.name, 0.0))
            cap["gpu_seconds"] += cs
            cap["cost_usd"] += cs / 3600.0 * n.price
            idle["gpu_seconds"] += ids
            idle["cost_usd"] += ids / 3600.0 * n.price
            if sec > 0:
                idle_nodes[n.name] = {"gpu_seconds": ids, "cost_usd": ids / 3600.0 * n.price,
                                      "model": n.model, "capacity_type": n.capacity_type}
        return {"start": start, "end": end, "groups": groups, "total": total,
                "unattributed": unattr, "capacity": cap, "idle": idle, "idle_nodes": idle_nodes,
                "pods": pods, "workloads": workloads}

    def complete_days(self, now):
        """[(configmap name, start, end)] of every UTC day with data that ended by now."""
        out = []
        d = floor_day(self.first_time())
        while d + DAY <= now:
            out.append((day_name(d), d, d + DAY))
            d += DAY
        return out

    def complete_weeks(self, now):
        out = []
        w = iso_week_start(self.first_time())
        while w + WEEK <= now:
            out.append((week_name(w), w, w + WEEK))
            w += WEEK
        return out

    def teams(self):
        return sorted({u.team for u in self.usages})
