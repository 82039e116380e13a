#!/usr/bin/env bash
# Smoke test of the end-to-end control plane: everything the controller tests rely on, done by
# hand with kubectl and curl against a fresh etcd, kube-apiserver, kube-scheduler and
# kube-controller-manager. Exits non-zero on any failure.
#
# Usage: tests/e2e/smoke.sh            (needs scripts/e2e-build.sh to have run)
#   E2E_DIR=DIR   cluster directory (default: a new temporary directory, removed afterwards)
#   E2E_KEEP=1    leave the cluster running at the end (stop: scripts/e2e-cluster.sh stop DIR)
#
# What a controller test builds on, shown step by step below:
#   - a Node is created with the labels of a real GPU node (tests/fixtures), and its capacity is
#     written through the status subresource (create drops status);
#   - a pod naming a scheduler that does not run (gpu-cost-replay) is left alone by
#     kube-scheduler: it stays Pending until the test binds it with POST pods/<name>/binding, and
#     with no kubelet its status (phase, PodScheduled lastTransitionTime, startTime,
#     containerStatuses) is whatever the test writes with PATCH pods/<name>/status, back-dated
#     timestamps included;
#   - a Deployment becomes a ReplicaSet and pods written by kube-controller-manager (with their
#     owner references), kube-scheduler binds a pod to the node by its GPU capacity and marks the
#     one that does not fit Unschedulable, and deleting the Deployment lets the garbage
#     collector delete the rest;
#   - a watch from a LIST's resourceVersion replays every change since, in order;
#   - deleting a bound pod only sets deletionTimestamp (no kubelet confirms it); a deletion with
#     gracePeriodSeconds=0 removes it at once;
#   - the controller's token is refused (403) until RBAC grants it, and then only for what is granted;
#   - restarting kube-apiserver keeps etcd's data and resourceVersions, but a watch from a
#     resourceVersion older than the restart usually gets an in-stream 410 Expired: LIST again.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cluster="$root/scripts/e2e-cluster.sh"
fixture="$root/tests/fixtures/gfd-node-labels-h100-mig-single-all-disabled.json"
passed=0
failed=0

own_dir=0
if [ -z "${E2E_DIR:-}" ]; then
	E2E_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpu-cost-e2e.XXXXXX")
	own_dir=1
fi
finish() {
	local rc=$?
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "smoke: cluster left running in $E2E_DIR"
	else
		"$cluster" stop "$E2E_DIR" >/dev/null 2>&1 || true
		[ "$own_dir" = 0 ] || rm -rf "$E2E_DIR"
	fi
	echo "smoke: ${passed} passed, ${failed} failed"
	[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] || exit 1
}
trap finish EXIT

ok() {
	passed=$((passed + 1))
	echo "smoke: ok   $*"
}
fail() {
	failed=$((failed + 1))
	echo "smoke: FAIL $*" >&2
	exit 1
}
# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1 = $3"; else fail "$1: got '$2', want '$3'"; fi
}
now_ms() { date +%s%3N; }

command -v python3 >/dev/null || fail "python3 is needed to read watch streams"
# Any other command that fails is a failure too, named by its line.
trap 'fail "line $LINENO: \"$BASH_COMMAND\" exited non-zero"' ERR

# --- start ----------------------------------------------------------------------------------
t0=$(now_ms)
"$cluster" start "$E2E_DIR" || fail "cluster start"
t1=$(now_ms)
ok "cluster start-to-ready in $((t1 - t0)) ms"
# shellcheck source=/dev/null
. "$E2E_DIR/env"
admin=(--kubeconfig "$E2E_DIR/admin.kubeconfig")
ctrl=(--kubeconfig "$E2E_DIR/controller.kubeconfig")
k() { "$KUBECTL" "${admin[@]}" "$@"; }

# api TOKEN METHOD PATH [BODY [CONTENT-TYPE]]: prints the body, then the HTTP status on its own
# line. The CA is verified, never skipped.
api() {
	local token=$1 method=$2 path=$3 body=${4:-} ctype=${5:-application/json}
	local args=(-sS --max-time 20 --cacert "$E2E_CA" -H "Authorization: Bearer $token"
		-X "$method" -w '\n%{http_code}\n')
	[ -z "$body" ] || args+=(-H "Content-Type: $ctype" --data-binary "$body")
	curl "${args[@]}" "${E2E_SERVER}${path}"
}
status_of() { tail -n1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }

# --- the server -----------------------------------------------------------------------------
ver=$(k version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')
case "$ver" in v1.*) ok "server version $ver" ;; *) fail "server version '$ver'" ;; esac
nss=$(k get ns -o jsonpath='{.items[*].metadata.name}')
for ns in default kube-system kube-public kube-node-lease; do
	case " $nss " in *" $ns "*) ok "namespace $ns exists" ;; *) fail "namespace $ns missing (have: $nss)" ;; esac
done

# --- a GPU node ------------------------------------------------------------------------------
node_json=$(python3 - "$fixture" <<'EOF'
import json, sys
labels = json.load(open(sys.argv[1]))
labels["kubernetes.io/hostname"] = "gpu-h100-0"
labels["node.kubernetes.io/instance-type"] = "p5.48xlarge"
labels["topology.kubernetes.io/region"] = "us-east-1"
print(json.dumps({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": "gpu-h100-0", "labels": labels}}))
EOF
)
k create -f - <<<"$node_json" >/dev/null || fail "create node"
ok "node gpu-h100-0 created with $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$fixture") fixture labels"
k patch node gpu-h100-0 --subresource=status --type=merge -p '{"status":{
  "capacity":{"cpu":"96","memory":"1056Gi","pods":"110","nvidia.com/gpu":"1"},
  "allocatable":{"cpu":"95","memory":"1000Gi","pods":"110","nvidia.com/gpu":"1"},
  "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"e2e",
    "lastHeartbeatTime":"2026-01-05T08:00:00Z","lastTransitionTime":"2026-01-05T08:00:00Z"}]}}' >/dev/null ||
	fail "patch node status"
expect_eq "node allocatable nvidia.com/gpu" \
	"$(k get node gpu-h100-0 -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" 1
expect_eq "node label nvidia.com/gpu.product" \
	"$(k get node gpu-h100-0 -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.product}')" NVIDIA-H100-80GB-HBM3

# --- a GPU pod: create, bind, write status ---------------------------------------------------
k create ns ml-research >/dev/null || fail "create namespace"
k label ns ml-research team=vision >/dev/null || fail "label namespace"
list=$(api "$E2E_ADMIN_TOKEN" GET "/api/v1/namespaces/ml-research/pods?limit=500")
expect_eq "LIST pods status" "$(status_of "$list")" 200
list_rv=$(body_of "$list" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
ok "LIST resourceVersion $list_rv"

k create -f - >/dev/null <<'EOF' || fail "create pod"
apiVersion: v1
kind: Pod
metadata:
  name: train-1
  namespace: ml-research
  labels: {team: vision, project: detector}
spec:
  schedulerName: gpu-cost-replay
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {nvidia.com/gpu: "1", cpu: "8", memory: 64Gi}
EOF
expect_eq "new pod phase" "$(k -n ml-research get pod train-1 -o jsonpath='{.status.phase}')" Pending
expect_eq "new pod nodeName" "$(k -n ml-research get pod train-1 -o jsonpath='{.spec.nodeName}')" ""

bind=$(api "$E2E_ADMIN_TOKEN" POST /api/v1/namespaces/ml-research/pods/train-1/binding \
	'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"train-1"},"target":{"apiVersion":"v1","kind":"Node","name":"gpu-h100-0"}}')
expect_eq "POST binding status" "$(status_of "$bind")" 201
expect_eq "bound pod nodeName" "$(k -n ml-research get pod train-1 -o jsonpath='{.spec.nodeName}')" gpu-h100-0

# Back-dated, exact timestamps: bound at 09:00:00, started 09:00:07, container up at 09:00:42.
patch='{"status":{"phase":"Running","startTime":"2026-01-05T09:00:07Z",
  "conditions":[
    {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-05T09:00:00Z"},
    {"type":"Initialized","status":"True","lastTransitionTime":"2026-01-05T09:00:07Z"},
    {"type":"ContainersReady","status":"True","lastTransitionTime":"2026-01-05T09:00:42Z"},
    {"type":"Ready","status":"True","lastTransitionTime":"2026-01-05T09:00:42Z"}],
  "containerStatuses":[{"name":"trainer","ready":true,"started":true,"restartCount":0,
    "image":"nvcr.io/nvidia/pytorch:24.05-py3","imageID":"",
    "state":{"running":{"startedAt":"2026-01-05T09:00:42Z"}}}]}}'
st=$(api "$E2E_ADMIN_TOKEN" PATCH /api/v1/namespaces/ml-research/pods/train-1/status "$patch" \
	application/merge-patch+json)
expect_eq "PATCH pods/status status" "$(status_of "$st")" 200
jp() { k -n ml-research get pod train-1 -o jsonpath="$1"; }
expect_eq "phase" "$(jp '{.status.phase}')" Running
expect_eq "PodScheduled lastTransitionTime" \
	"$(jp '{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}')" 2026-01-05T09:00:00Z
expect_eq "startTime" "$(jp '{.status.startTime}')" 2026-01-05T09:00:07Z
expect_eq "container startedAt" "$(jp '{.status.containerStatuses[0].state.running.startedAt}')" \
	2026-01-05T09:00:42Z

# The container finishes: terminated with exact start and finish times, pod Succeeded.
patch='{"status":{"phase":"Succeeded",
  "containerStatuses":[{"name":"trainer","ready":false,"started":false,"restartCount":0,
    "image":"nvcr.io/nvidia/pytorch:24.05-py3","imageID":"",
    "state":{"terminated":{"exitCode":0,"reason":"Completed",
      "startedAt":"2026-01-05T09:00:42Z","finishedAt":"2026-01-05T15:30:42Z"}}}]}}'
st=$(api "$E2E_ADMIN_TOKEN" PATCH /api/v1/namespaces/ml-research/pods/train-1/status "$patch" \
	application/merge-patch+json)
expect_eq "PATCH pods/status (terminated) status" "$(status_of "$st")" 200
expect_eq "finishedAt" "$(jp '{.status.containerStatuses[0].state.terminated.finishedAt}')" \
	2026-01-05T15:30:42Z
expect_eq "PodScheduled kept by the merge patch" \
	"$(jp '{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}')" 2026-01-05T09:00:00Z

# --- watch from the LIST's resourceVersion: the whole history replays in order --------------
# The server ends the stream at timeoutSeconds; that end is normal.
watch_path="/api/v1/namespaces/ml-research/pods?watch=1&resourceVersion=${list_rv}&allowWatchBookmarks=true&timeoutSeconds=2"
curl -sS --max-time 10 --cacert "$E2E_CA" -H "Authorization: Bearer $E2E_ADMIN_TOKEN" \
	"${E2E_SERVER}${watch_path}" >"$E2E_DIR/watch1.ndjson" || fail "watch request"
summary=$(python3 - "$E2E_DIR/watch1.ndjson" <<'EOF'
import json, sys
out = []
for line in open(sys.argv[1]):
    ev = json.loads(line)
    if ev["type"] == "BOOKMARK":
        continue
    o = ev["object"]
    out.append("%s:%s:%s:%s" % (ev["type"], o["metadata"]["name"], o["spec"].get("nodeName", "-"),
                                o["status"].get("phase")))
print(" ".join(out))
EOF
)
expect_eq "watch replay" "$summary" \
	"ADDED:train-1:-:Pending MODIFIED:train-1:gpu-h100-0:Pending MODIFIED:train-1:gpu-h100-0:Running MODIFIED:train-1:gpu-h100-0:Succeeded"
last_rv=$(k -n ml-research get pod train-1 -o jsonpath='{.metadata.resourceVersion}')

# --- helm: render a chart for the pinned version, validate it server-side ------------------
helm=("$E2E_BIN/helm")
export HELM_CACHE_HOME="$E2E_DIR/helm/cache" HELM_CONFIG_HOME="$E2E_DIR/helm/config" \
	HELM_DATA_HOME="$E2E_DIR/helm/data"
mkdir -p "$E2E_DIR/helm"
"${helm[@]}" create "$E2E_DIR/helm/demo" >/dev/null || fail "helm create"
cat >"$E2E_DIR/helm/demo/templates/kubeversion.yaml" <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-kubeversion}
data: {kube: "{{ .Capabilities.KubeVersion.Version }}"}
EOF2
# Without --kube-version (and without a cluster) helm 3 assumes the version it was stamped with
# (the default cluster's minor, also in the skew run: helm is built once); helm 4 the one of the
# client-go it was built with.
minor=$(sed -n 's/^[[:space:]]*k8s.io\/kubernetes v1\.\([0-9]*\)\..*$/\1/p' "$root/tests/e2e/tools/go.mod")
expect_eq "helm 3 default kube version" \
	"$("$E2E_BIN/helm3" template demo "$E2E_DIR/helm/demo" --show-only templates/kubeversion.yaml |
		sed -n 's/^data: {kube: "\(.*\)"}$/\1/p')" "v1.${minor}.0"
h4=$("${helm[@]}" template demo "$E2E_DIR/helm/demo" --show-only templates/kubeversion.yaml |
	sed -n 's/^data: {kube: "\(.*\)"}$/\1/p')
case "$h4" in v1.3[0-9].*) ok "helm 4 default kube version $h4" ;; *) fail "helm 4 default kube version '$h4'" ;; esac
"${helm[@]}" template demo "$E2E_DIR/helm/demo" --namespace gpu-cost --kube-version "$ver" \
	>"$E2E_DIR/helm/demo.yaml" || fail "helm template"
k create ns gpu-cost >/dev/null || fail "create namespace gpu-cost"
k apply --dry-run=server -n gpu-cost -f "$E2E_DIR/helm/demo.yaml" >"$E2E_DIR/helm/apply.out" ||
	fail "server-side dry-run of the rendered chart"
ok "helm template | kubectl apply --dry-run=server: $(wc -l <"$E2E_DIR/helm/apply.out") objects valid"
k -n gpu-cost get deploy demo >/dev/null 2>&1 && fail "dry-run created the Deployment"
sed 's/^\(  *\)replicas: .*/\1replicas: "two"/' "$E2E_DIR/helm/demo.yaml" >"$E2E_DIR/helm/bad.yaml"
if k apply --dry-run=server -n gpu-cost -f "$E2E_DIR/helm/bad.yaml" >/dev/null 2>"$E2E_DIR/helm/bad.err"; then
	fail "server-side dry-run accepted replicas: \"two\""
fi
ok "server-side dry-run rejects a bad field: $(head -n1 "$E2E_DIR/helm/bad.err" | cut -c1-100)"

# --- RBAC: the controller's token --------------------------------------------------------------
who=$("$KUBECTL" "${ctrl[@]}" auth whoami -o jsonpath='{.status.userInfo.username}') || fail "auth whoami"
expect_eq "controller identity" "$who" "$E2E_CONTROLLER_USER"
r=$(api "$E2E_CONTROLLER_TOKEN" GET /api/v1/pods)
expect_eq "controller LIST pods without RBAC" "$(status_of "$r")" 403
if "$KUBECTL" "${ctrl[@]}" get nodes >/dev/null 2>"$E2E_DIR/kubectl.err"; then
	fail "kubectl get nodes as the controller succeeded without RBAC"
fi
grep -q Forbidden "$E2E_DIR/kubectl.err" || fail "kubectl error is not Forbidden: $(cat "$E2E_DIR/kubectl.err")"
ok "kubectl as the controller: Forbidden"

# Grant read on pods and nodes, bound to the ServiceAccount the user name denotes.
sa_ns=gpu-cost
sa_name=gpu-cost-controller
case "$E2E_CONTROLLER_USER" in
system:serviceaccount:*:*)
	sa=${E2E_CONTROLLER_USER#system:serviceaccount:}
	sa_ns=${sa%%:*}
	sa_name=${sa#*:}
	subject="{kind: ServiceAccount, name: ${sa_name}, namespace: ${sa_ns}}"
	;;
*) subject="{kind: User, name: \"${E2E_CONTROLLER_USER}\", apiGroup: rbac.authorization.k8s.io}" ;;
esac
k apply -f - >/dev/null <<EOF || fail "create RBAC"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-smoke-reader}
rules:
- apiGroups: [""]
  resources: [pods, nodes, namespaces]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-smoke-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-smoke-reader}
subjects:
- ${subject}
EOF
# The authorizer reads RBAC objects through an informer: allow a moment for it to see them.
code=""
for _ in $(seq 1 50); do
	code=$(status_of "$(api "$E2E_CONTROLLER_TOKEN" GET /api/v1/pods)")
	[ "$code" = 200 ] && break
	sleep 0.1
done
expect_eq "controller LIST pods with RBAC" "$code" 200
expect_eq "controller LIST secrets with RBAC" \
	"$(status_of "$(api "$E2E_CONTROLLER_TOKEN" GET /api/v1/secrets)")" 403
expect_eq "controller DELETE pod with RBAC" \
	"$(status_of "$(api "$E2E_CONTROLLER_TOKEN" DELETE /api/v1/namespaces/ml-research/pods/train-1)")" 403

# --- the real scheduler and controller-manager -------------------------------------------------
# train-1 has finished, so the node's one GPU is free for the scheduler to give.
k create ns inference >/dev/null || fail "create namespace inference"
k apply -f - >/dev/null <<'EOF2' || fail "create deployment"
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: inference}
spec:
  replicas: 1
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer, team: vision, project: serving}}
    spec:
      containers:
      - name: server
        image: nvcr.io/nvidia/tritonserver:24.05-py3
        resources:
          limits: {nvidia.com/gpu: "1"}
EOF2
# wait_for WHAT JSONPATH-COMMAND...: polls up to 30 s until the command prints something.
wait_for() {
	local what=$1 out=""
	shift
	for _ in $(seq 1 150); do
		out=$("$@" 2>/dev/null) || out=""
		[ -z "$out" ] || break
		sleep 0.2
	done
	[ -n "$out" ] || fail "$what: nothing after 30 s"
	printf '%s' "$out"
}
rs=$(wait_for "ReplicaSet of the Deployment" k -n inference get rs -l app=infer -o jsonpath='{.items[0].metadata.name}')
expect_eq "ReplicaSet owner (written by kube-controller-manager)" \
	"$(k -n inference get rs "$rs" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')" \
	"Deployment/infer/true"
pod=$(wait_for "pod of the ReplicaSet" k -n inference get pod -l app=infer -o jsonpath='{.items[0].metadata.name}')
case "$pod" in "$rs"-*) ok "pod name $pod from the ReplicaSet's generateName" ;; *) fail "pod name $pod" ;; esac
expect_eq "pod owner (written by kube-controller-manager)" \
	"$(k -n inference get pod "$pod" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')" \
	"ReplicaSet/$rs/true"
expect_eq "pod bound by kube-scheduler" \
	"$(wait_for "binding of $pod" k -n inference get pod "$pod" -o jsonpath='{.spec.nodeName}')" gpu-h100-0
expect_eq "PodScheduled written by kube-scheduler" \
	"$(k -n inference get pod "$pod" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}')" True
# A second replica does not fit: the node has one GPU.
k -n inference scale deployment infer --replicas=2 >/dev/null || fail "scale deployment"
reason=$(wait_for "Unschedulable condition" k -n inference get pod -l app=infer \
	-o jsonpath='{.items[?(@.status.conditions[0].reason=="Unschedulable")].status.conditions[0].message}')
case "$reason" in *"Insufficient nvidia.com/gpu"*) ok "second replica Unschedulable: $reason" ;;
*) fail "second replica: '$reason'" ;; esac
# Deleting the Deployment: the garbage collector deletes the ReplicaSet and then its pods; the
# bound one only gets a deletionTimestamp (no kubelet confirms it), the pending one goes at once.
k -n inference delete deployment infer --wait=false >/dev/null || fail "delete deployment"
for _ in $(seq 1 150); do
	[ -z "$(k -n inference get rs -o name)" ] && break
	sleep 0.2
done
expect_eq "ReplicaSet deleted by the garbage collector" "$(k -n inference get rs -o name)" ""
dts=$(wait_for "deletionTimestamp on $pod" k -n inference get pod "$pod" -o jsonpath='{.metadata.deletionTimestamp}')
ok "bound pod marked for deletion by the garbage collector at $dts"
r=$(api "$E2E_ADMIN_TOKEN" DELETE "/api/v1/namespaces/inference/pods/$pod" '{"gracePeriodSeconds":0}')
expect_eq "DELETE gracePeriodSeconds=0 of $pod" "$(status_of "$r")" 200

# --- restart kube-apiserver only: data and resourceVersions survive -------------------------
t0=$(now_ms)
"$cluster" restart-apiserver "$E2E_DIR" || fail "restart-apiserver"
t1=$(now_ms)
ok "kube-apiserver restart-to-ready in $((t1 - t0)) ms"
# shellcheck source=/dev/null
. "$E2E_DIR/env"
expect_eq "pod survives the restart" "$(jp '{.metadata.resourceVersion}')" "$last_rv"

# A watch from a resourceVersion older than the restart: the new server's watch cache starts at
# the revision it listed at start-up, and kube-apiserver writes a few objects of its own while
# starting, so the usual answer is HTTP 200 with one in-stream ERROR event (Status 410 Expired,
# "too old resource version"); the client must LIST again. A server that happened to list
# before its own writes would replay instead: a client has to handle both.
curl -sS --max-time 10 --cacert "$E2E_CA" -H "Authorization: Bearer $E2E_ADMIN_TOKEN" \
	-o "$E2E_DIR/watch-old.ndjson" -w '%{http_code}\n' \
	"${E2E_SERVER}/api/v1/namespaces/ml-research/pods?watch=1&resourceVersion=${last_rv}&timeoutSeconds=2" \
	>"$E2E_DIR/watch-old.code" || fail "watch from a pre-restart resourceVersion"
old_watch=$(python3 - "$(cat "$E2E_DIR/watch-old.code")" "$E2E_DIR/watch-old.ndjson" <<'EOF2'
import json, sys
if sys.argv[1] != "200":
    print("http-%s" % sys.argv[1])
    sys.exit()
evs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
evs = [e for e in evs if e["type"] != "BOOKMARK"]
if len(evs) == 1 and evs[0]["type"] == "ERROR":
    print("error-%s-%s" % (evs[0]["object"].get("code"), evs[0]["object"].get("reason")))
else:
    print("events-%d" % len(evs))
EOF2
)
case "$old_watch" in
error-410-Expired | error-410-Gone | http-410) ok "watch from a pre-restart resourceVersion: $old_watch (LIST again)" ;;
events-*) ok "watch from a pre-restart resourceVersion replayed ($old_watch)" ;;
*) fail "watch from a pre-restart resourceVersion: $old_watch" ;;
esac
relist=$(api "$E2E_ADMIN_TOKEN" GET "/api/v1/namespaces/ml-research/pods?limit=500")
expect_eq "re-LIST after the restart" "$(status_of "$relist")" 200
last_rv=$(body_of "$relist" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')

# A live watch from the re-LIST's resourceVersion sees deletions. A pod in a terminal phase
# (train-1 Succeeded) is removed at once. A running pod bound to a node is only marked with
# deletionTimestamp, since no kubelet confirms it; gracePeriodSeconds=0 then removes it.
k create -f - >/dev/null <<'EOF2' || fail "create pod train-2"
apiVersion: v1
kind: Pod
metadata: {name: train-2, namespace: ml-research, labels: {team: vision, project: detector}}
spec:
  nodeName: gpu-h100-0
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {nvidia.com/gpu: "1"}
EOF2
st=$(api "$E2E_ADMIN_TOKEN" PATCH /api/v1/namespaces/ml-research/pods/train-2/status \
	'{"status":{"phase":"Running","startTime":"2026-01-06T00:00:00Z","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-06T00:00:00Z"}]}}' \
	application/merge-patch+json)
expect_eq "PATCH train-2 status" "$(status_of "$st")" 200
curl -sS -N --max-time 30 --cacert "$E2E_CA" -H "Authorization: Bearer $E2E_ADMIN_TOKEN" \
	"${E2E_SERVER}/api/v1/namespaces/ml-research/pods?watch=1&resourceVersion=${last_rv}&timeoutSeconds=6" \
	>"$E2E_DIR/watch2.ndjson" &
watch_pid=$!
sleep 1
k -n ml-research delete pod train-1 --wait=false >/dev/null || fail "delete train-1"
k -n ml-research delete pod train-2 --wait=false >/dev/null || fail "graceful delete train-2"
expect_eq "finished pod deleted at once" \
	"$(status_of "$(api "$E2E_ADMIN_TOKEN" GET /api/v1/namespaces/ml-research/pods/train-1)")" 404
dts=$(k -n ml-research get pod train-2 -o jsonpath='{.metadata.deletionTimestamp}')
[ -n "$dts" ] || fail "graceful delete of a running bound pod did not set deletionTimestamp"
ok "graceful delete of a running pod sets deletionTimestamp $dts; the pod stays"
r=$(api "$E2E_ADMIN_TOKEN" DELETE /api/v1/namespaces/ml-research/pods/train-2 '{"gracePeriodSeconds":0}')
expect_eq "DELETE gracePeriodSeconds=0 status" "$(status_of "$r")" 200
expect_eq "train-2 gone" \
	"$(status_of "$(api "$E2E_ADMIN_TOKEN" GET /api/v1/namespaces/ml-research/pods/train-2)")" 404
wait "$watch_pid" || fail "live watch ended with an error"
summary=$(python3 -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
print(" ".join("%s:%s" % (e["type"], e["object"]["metadata"]["name"]) for e in evs
               if e["type"] != "BOOKMARK"))' "$E2E_DIR/watch2.ndjson")
# train-2: created, status written; train-1: deletionTimestamp set (grace 0), gone; train-2:
# deletionTimestamp set (grace 30 s), grace period cut to 0, gone.
expect_eq "live watch after the restart" "$summary" \
	"ADDED:train-2 MODIFIED:train-2 MODIFIED:train-1 DELETED:train-1 MODIFIED:train-2 MODIFIED:train-2 DELETED:train-2"

# --- stop is idempotent ----------------------------------------------------------------------
if [ "${E2E_KEEP:-0}" != 1 ]; then
	"$cluster" stop "$E2E_DIR" || fail "stop"
	"$cluster" stop "$E2E_DIR" || fail "second stop"
	if "$cluster" status "$E2E_DIR" 2>/dev/null; then fail "status after stop says running"; fi
	ok "stop twice; status reports stopped"
fi
