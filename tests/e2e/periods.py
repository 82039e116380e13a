"""The periods the e2e tests ask the controller about, chosen from the truth and `now`, so that
what a test asserts about its own truth holds whatever the weekday and hour it runs.

test_calendar.py calls these with the plan's record (sim.plan_record) at fixed moments across
weeks, months and a year's end, and checks each test's preconditions there; the e2e tests call
the same functions with the replay's real record.
"""

# The workloads kube-controller-manager makes for the replay (sim.py), by kind.
KCM_KINDS = ("Deployment/", "Job/", "CronJob/")


def complete_day_span(t, now):
    """[start, end) of every complete UTC day together: everything the replay wrote but its
    last day, whatever the weekday (a complete ISO week can hold as little as a few hours of
    the eight-day replay)."""
    days = t.complete_days(now)
    return days[0][1], days[-1][2]


def label_costs(t, record, key, start, end):
    """{value: cost} over [start, end) of label `key` as a kept dimension: the pod's value,
    else its namespace's, else __unlabelled__ (docs/configuration.md, label dimensions)."""
    ns_labels = {ns["metadata"]["name"]: ns["metadata"].get("labels") or {}
                 for ns in record["namespaces"]}
    pod_labels = {"%s/%s" % (p["namespace"], p["name"]): (p["labels"],
                                                          ns_labels.get(p["namespace"], {}))
                  for p in record["pods"]}
    out = {}
    for u in t.usages:
        e = end if u.end is None else min(u.end, end)
        sec = max(0, e - max(u.start, start))
        if sec <= 0:
            continue
        pl, nl = pod_labels[u.name]
        v = pl.get(key) or nl.get(key) or "__unlabelled__"
        out[v] = out.get(v, 0.0) + u.geq * sec / 3600.0 * u.price
    return out


def week_workload_kinds(t, now):
    """The kinds of kube-controller-manager's workloads that held GPUs in the complete weeks."""
    kinds = set()
    for _, start, end in t.complete_weeks(now):
        for k, v in t.window(start, end)["workloads"].items():
            if k.startswith(KCM_KINDS) and v["gpu_seconds"] > 0:
                kinds.add(k.split("/", 1)[0])
    return kinds
