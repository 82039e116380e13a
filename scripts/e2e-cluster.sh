#!/usr/bin/env bash
# Runs a throw-away control plane for the end-to-end tests on loopback: etcd, kube-apiserver,
# kube-scheduler and kube-controller-manager, each with its own identity (token users named as
# the default bootstrap RBAC roles expect), RBAC on. There is no kubelet: tests/e2e/kubelet.py
# is a simulated one that writes the status of pods bound to its nodes.
#
# Usage: scripts/e2e-cluster.sh COMMAND DIR
#   start              fresh cluster in DIR (wipes DIR's old state); writes DIR/env,
#                      DIR/admin.kubeconfig, DIR/controller.kubeconfig, DIR/kube-scheduler.kubeconfig,
#                      DIR/kube-controller-manager.kubeconfig; waits for each /readyz or /healthz
#   stop               stops the scheduler, the controller-manager, kube-apiserver, then etcd
#                      (safe to call twice, or on a dead cluster)
#   restart-apiserver  stops and starts kube-apiserver only, same port, etcd and certificates
#   stop-apiserver     stops kube-apiserver only (etcd and its data stay)
#   start-apiserver    starts kube-apiserver again after stop-apiserver; waits for /readyz
#   status             exits 0 when all four processes run and /readyz answers 200
#   env                prints DIR/env (shell-sourceable)
#
# The controller-manager runs every default controller but the node lifecycle and taint-eviction
# ones (no kubelet posts heartbeats here, so they would taint and evict every node), the CSR
# signer (no cluster CA key) and the legacy service-account token controller; each controller
# uses its own service account's credentials (--use-service-account-credentials). For the same
# reason kube-apiserver's TaintNodesByCondition admission is off: it taints every new Node
# not-ready until the node lifecycle controller sees its kubelet's heartbeat, so kube-scheduler
# would place nothing on the test's Nodes.
#
# Environment: E2E_BIN (binaries, default ${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-e2e/bin),
# E2E_READY_TIMEOUT (seconds to wait for readiness, default 90),
# E2E_CONTROLLER_USER (the controller token's user name, default
# system:serviceaccount:gpu-cost:gpu-cost-controller, so the chart's ServiceAccount binding
# applies),
# E2E_AUDIT=1 at start (off by default): kube-apiserver writes an audit log, DIR/audit.log, one
# JSON event per request of E2E_CONTROLLER_USER at the Metadata level (verb, resource, namespace,
# status; no bodies) and nothing of anyone else; kept on through restart-apiserver.
#
# Client certificates: kube-apiserver trusts DIR/client-ca.crt (--client-ca-file), a CA made at
# start and kept through restarts; a certificate it signs authenticates as its CN, in the groups
# of its O fields (tests/e2e/test_client_cert.py signs one with DIR/client-ca.key).
#
# DIR/env holds: E2E_DIR E2E_BIN E2E_SERVER E2E_CA E2E_ADMIN_TOKEN E2E_CONTROLLER_TOKEN
# E2E_CONTROLLER_USER E2E_ETCD_URL E2E_APISERVER_PORT E2E_ETCD_PID E2E_APISERVER_PID
# E2E_SCHEDULER_PID E2E_KCM_PID KUBECTL E2E_AUDIT_LOG (empty when the audit log is off)
# E2E_CLIENT_CA E2E_CLIENT_CA_KEY.
set -euo pipefail

E2E_BIN=${E2E_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/gpu-cost-e2e/bin}
[ ! -d "$E2E_BIN" ] || E2E_BIN=$(cd "$E2E_BIN" && pwd)
E2E_READY_TIMEOUT=${E2E_READY_TIMEOUT:-90}
E2E_CONTROLLER_USER=${E2E_CONTROLLER_USER:-system:serviceaccount:gpu-cost:gpu-cost-controller}
E2E_AUDIT=${E2E_AUDIT:-0}

say() { echo "e2e-cluster: $*" >&2; }
die() {
	echo "e2e-cluster: ERROR: $*" >&2
	exit 1
}
usage() {
	sed -n '2,39p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

if [ $# -ne 2 ] || [ -z "$2" ]; then usage; fi
cmd=$1
case "$cmd" in
start | stop | stop-apiserver | start-apiserver | restart-apiserver | status | env) ;;
*) usage ;;
esac
if [ "$cmd" = start ]; then
	mkdir -p "$2" || die "cannot create $2"
elif [ ! -d "$2" ]; then
	# Nothing was ever started there: stopping is already done, anything else is an error.
	[ "$cmd" = stop ] || die "no cluster in $2"
	say "no cluster in $2"
	exit 0
fi
DIR=$(cd "$2" && pwd)

for tool in curl openssl base64; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done

# --- processes ------------------------------------------------------------------------------

# is_ours PID NAME: the pid is alive and is our NAME binary started for this DIR. A pid from an
# old env file may have been reused by an unrelated process, which must never be signalled.
is_ours() {
	local pid=$1 name=$2 argv0 args
	[ -n "$pid" ] && [ "$pid" -gt 0 ] 2>/dev/null || return 1
	[ -r "/proc/$pid/cmdline" ] || return 1
	# A zombie (exited, not yet reaped) has an empty command line: not running.
	args=$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	argv0=$(printf '%s\n' "$args" | head -n1)
	[ "$argv0" = "$E2E_BIN/$name" ] || return 1
	case "$args" in
	*"$DIR"*) return 0 ;;
	*) return 1 ;;
	esac
}

# stop_pid PID NAME: SIGTERM, up to 15 s for a clean exit, then SIGKILL.
stop_pid() {
	local pid=$1 name=$2
	if ! is_ours "$pid" "$name"; then
		say "$name: not running"
		return 0
	fi
	say "$name: stopping pid $pid"
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 150); do
		is_ours "$pid" "$name" || break
		sleep 0.1
	done
	if is_ours "$pid" "$name"; then
		say "$name: still alive after 15 s, sending SIGKILL"
		kill -KILL "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			is_ours "$pid" "$name" || break
			sleep 0.1
		done
	fi
	! is_ours "$pid" "$name" || die "$name: pid $pid does not die"
}

log_tail() {
	echo "---- last 40 lines of $1 ----" >&2
	tail -n 40 "$1" >&2 || true
	echo "----" >&2
}

# free_ports N: N distinct loopback TCP ports that are free now. They are bound together (so
# they differ) and released; the start-up below retries with new ports if one was taken since.
free_ports() {
	if command -v python3 >/dev/null; then
		python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
		return
	fi
	# Without python: random ports from the dynamic range that nothing listens on.
	local ports=() p
	while [ "${#ports[@]}" -lt "$1" ]; do
		p=$((20000 + RANDOM % 30000))
		case " ${ports[*]} " in *" $p "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			ports+=("$p")
		fi
	done
	echo "${ports[*]}"
}

# audit_log: the audit log's path when this cluster was started with E2E_AUDIT=1, else nothing.
audit_log() {
	if [ -f "$DIR/audit-policy.yaml" ]; then echo "$DIR/audit.log"; fi
}

write_env() {
	local f="$DIR/env.tmp"
	(
		umask 077
		{
			echo "# Written by e2e-cluster.sh; source it."
			printf 'E2E_DIR=%q\n' "$DIR"
			printf 'E2E_BIN=%q\n' "$E2E_BIN"
			printf 'E2E_SERVER=%q\n' "https://127.0.0.1:${E2E_APISERVER_PORT}"
			printf 'E2E_CA=%q\n' "$DIR/certs/apiserver.crt"
			printf 'E2E_ADMIN_TOKEN=%q\n' "$E2E_ADMIN_TOKEN"
			printf 'E2E_CONTROLLER_TOKEN=%q\n' "$E2E_CONTROLLER_TOKEN"
			printf 'E2E_CONTROLLER_USER=%q\n' "$E2E_CONTROLLER_USER"
			printf 'E2E_ETCD_URL=%q\n' "$E2E_ETCD_URL"
			printf 'E2E_ETCD_PEER_PORT=%q\n' "$E2E_ETCD_PEER_PORT"
			printf 'E2E_APISERVER_PORT=%q\n' "$E2E_APISERVER_PORT"
			printf 'E2E_ETCD_PID=%q\n' "${E2E_ETCD_PID:-}"
			printf 'E2E_APISERVER_PID=%q\n' "${E2E_APISERVER_PID:-}"
			printf 'E2E_SCHEDULER_PID=%q\n' "${E2E_SCHEDULER_PID:-}"
			printf 'E2E_KCM_PID=%q\n' "${E2E_KCM_PID:-}"
			printf 'KUBECTL=%q\n' "$E2E_BIN/kubectl"
			printf 'E2E_AUDIT_LOG=%q\n' "$(audit_log)"
			printf 'E2E_CLIENT_CA=%q\n' "$DIR/client-ca.crt"
			printf 'E2E_CLIENT_CA_KEY=%q\n' "$DIR/client-ca.key"
			echo "export E2E_DIR E2E_BIN E2E_SERVER E2E_CA E2E_ADMIN_TOKEN E2E_CONTROLLER_TOKEN"
			echo "export E2E_CONTROLLER_USER E2E_ETCD_URL E2E_APISERVER_PORT KUBECTL E2E_AUDIT_LOG"
			echo "export E2E_CLIENT_CA E2E_CLIENT_CA_KEY"
		} >"$f"
	)
	mv -f "$f" "$DIR/env"
}

load_env() {
	[ -f "$DIR/env" ] || return 1
	# shellcheck source=/dev/null
	. "$DIR/env"
}

# --- etcd -----------------------------------------------------------------------------------

# start_etcd: returns 1 (not fatal) when a port was taken, so the caller can pick new ones.
start_etcd() {
	local client=$1 peer=$2
	E2E_ETCD_URL="http://127.0.0.1:${client}"
	E2E_ETCD_PEER_PORT=$peer
	mkdir -p "$DIR/etcd"
	say "etcd: starting on ${E2E_ETCD_URL} (log $DIR/etcd.log)"
	# --unsafe-no-fsync: the data is thrown away after the test, and fsync is most of the
	# start-up and write latency on a shared disk.
	nohup "$E2E_BIN/etcd" \
		--name e2e \
		--data-dir "$DIR/etcd" \
		--listen-client-urls "$E2E_ETCD_URL" \
		--advertise-client-urls "$E2E_ETCD_URL" \
		--listen-peer-urls "http://127.0.0.1:${peer}" \
		--initial-advertise-peer-urls "http://127.0.0.1:${peer}" \
		--initial-cluster "e2e=http://127.0.0.1:${peer}" \
		--unsafe-no-fsync \
		--log-level warn \
		</dev/null >"$DIR/etcd.log" 2>&1 &
	E2E_ETCD_PID=$!
	for _ in $(seq 1 200); do
		if ! kill -0 "$E2E_ETCD_PID" 2>/dev/null; then
			if grep -q 'address already in use' "$DIR/etcd.log"; then
				say "etcd: a port was taken meanwhile; retrying with new ports"
				return 1
			fi
			log_tail "$DIR/etcd.log"
			die "etcd exited during start-up"
		fi
		if curl -fsS --max-time 2 "${E2E_ETCD_URL}/health" 2>/dev/null | grep -q '"health":"true"'; then
			say "etcd: healthy (pid $E2E_ETCD_PID)"
			return 0
		fi
		sleep 0.1
	done
	log_tail "$DIR/etcd.log"
	stop_pid "$E2E_ETCD_PID" etcd
	die "etcd not healthy after 20 s"
}

# --- kube-apiserver -------------------------------------------------------------------------

# start_apiserver: returns 1 (not fatal) when the port was taken and the caller may retry.
start_apiserver() {
	local port=$E2E_APISERVER_PORT deadline code="" audit=()
	if [ -f "$DIR/audit-policy.yaml" ]; then
		audit=(--audit-policy-file "$DIR/audit-policy.yaml" --audit-log-path "$DIR/audit.log")
	fi
	say "kube-apiserver: starting on https://127.0.0.1:${port} (log $DIR/kube-apiserver.log)"
	# The serving certificate is self-signed into --cert-dir on the first start and reused on
	# restarts, so clients keep trusting the same CA (apiserver.crt = certificate + its CA).
	nohup "$E2E_BIN/kube-apiserver" \
		--etcd-servers "$E2E_ETCD_URL" \
		--bind-address 127.0.0.1 \
		--advertise-address 127.0.0.1 \
		--secure-port "$port" \
		--cert-dir "$DIR/certs" \
		--service-cluster-ip-range 10.0.0.0/24 \
		--service-account-issuer "https://127.0.0.1:${port}" \
		--service-account-key-file "$DIR/sa.key" \
		--service-account-signing-key-file "$DIR/sa.key" \
		--token-auth-file "$DIR/tokens.csv" \
		--client-ca-file "$DIR/client-ca.crt" \
		--authorization-mode RBAC \
		--disable-admission-plugins ServiceAccount,TaintNodesByCondition \
		--endpoint-reconciler-type none \
		--allow-privileged \
		"${audit[@]}" \
		</dev/null >>"$DIR/kube-apiserver.log" 2>&1 &
	E2E_APISERVER_PID=$!
	deadline=$(($(date +%s) + E2E_READY_TIMEOUT))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if ! kill -0 "$E2E_APISERVER_PID" 2>/dev/null; then
			if tail -n 20 "$DIR/kube-apiserver.log" | grep -q 'address already in use'; then
				say "kube-apiserver: port $port was taken meanwhile"
				return 1
			fi
			log_tail "$DIR/kube-apiserver.log"
			die "kube-apiserver exited during start-up"
		fi
		if [ -s "$DIR/certs/apiserver.crt" ]; then
			code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 \
				--cacert "$DIR/certs/apiserver.crt" \
				-H "Authorization: Bearer ${E2E_ADMIN_TOKEN}" \
				"https://127.0.0.1:${port}/readyz" 2>/dev/null) || code=""
			if [ "$code" = 200 ]; then
				say "kube-apiserver: ready (pid $E2E_APISERVER_PID)"
				return 0
			fi
		fi
		sleep 0.2
	done
	log_tail "$DIR/kube-apiserver.log"
	stop_pid "$E2E_APISERVER_PID" kube-apiserver
	die "kube-apiserver not ready after ${E2E_READY_TIMEOUT} s (last /readyz status: ${code:-none})"
}

# --- kube-scheduler and kube-controller-manager ------------------------------------------------

# start_component NAME PORT ARGS...: NAME serves /healthz on https://127.0.0.1:PORT (its own
# self-signed certificate); returns 1 (not fatal) when the port was taken meanwhile.
start_component() {
	local name=$1 port=$2 pid deadline code=""
	shift 2
	mkdir -p "$DIR/certs-$name"
	say "$name: starting (log $DIR/$name.log)"
	nohup "$E2E_BIN/$name" \
		--kubeconfig "$DIR/$name.kubeconfig" \
		--authentication-kubeconfig "$DIR/$name.kubeconfig" \
		--authorization-kubeconfig "$DIR/$name.kubeconfig" \
		--bind-address 127.0.0.1 \
		--secure-port "$port" \
		--cert-dir "$DIR/certs-$name" \
		--leader-elect=false \
		"$@" \
		</dev/null >>"$DIR/$name.log" 2>&1 &
	pid=$!
	deadline=$(($(date +%s) + E2E_READY_TIMEOUT))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			if tail -n 20 "$DIR/$name.log" | grep -q 'address already in use'; then
				say "$name: port $port was taken meanwhile"
				return 1
			fi
			log_tail "$DIR/$name.log"
			die "$name exited during start-up"
		fi
		code=$(curl -ksS -o /dev/null -w '%{http_code}' --max-time 2 \
			"https://127.0.0.1:${port}/healthz" 2>/dev/null) || code=""
		if [ "$code" = 200 ]; then
			say "$name: healthy (pid $pid)"
			COMPONENT_PID=$pid
			return 0
		fi
		sleep 0.2
	done
	log_tail "$DIR/$name.log"
	stop_pid "$pid" "$name"
	die "$name not healthy after ${E2E_READY_TIMEOUT} s (last /healthz status: ${code:-none})"
}

start_scheduler() {
	local attempt port
	for attempt in 1 2 3 4 5; do
		read -r port <<<"$(free_ports 1)"
		start_component kube-scheduler "$port" && break
		[ "$attempt" -lt 5 ] || die "could not start kube-scheduler on a free port after 5 attempts"
	done
	E2E_SCHEDULER_PID=$COMPONENT_PID
}

start_controller_manager() {
	local attempt port
	for attempt in 1 2 3 4 5; do
		read -r port <<<"$(free_ports 1)"
		start_component kube-controller-manager "$port" \
			--use-service-account-credentials \
			--root-ca-file "$DIR/certs/apiserver.crt" \
			--service-cluster-ip-range 10.0.0.0/24 \
			--controllers '*,-node-lifecycle-controller,-taint-eviction-controller,-certificatesigningrequest-signing-controller,-serviceaccount-token-controller' &&
			break
		[ "$attempt" -lt 5 ] || die "could not start kube-controller-manager on a free port after 5 attempts"
	done
	E2E_KCM_PID=$COMPONENT_PID
}

write_kubeconfig() {
	local file=$1 user=$2 token=$3 ca
	ca=$(base64 -w0 <"$DIR/certs/apiserver.crt")
	(
		umask 077
		cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:${E2E_APISERVER_PORT}
    certificate-authority-data: ${ca}
users:
- name: ${user}
  user:
    token: ${token}
contexts:
- name: ${user}@e2e
  context:
    cluster: e2e
    user: ${user}
current-context: ${user}@e2e
EOF
	)
}

# --- commands -------------------------------------------------------------------------------

cmd_start() {
	local attempt ports
	for bin in etcd kube-apiserver kube-scheduler kube-controller-manager; do
		[ -x "$E2E_BIN/$bin" ] || die "$E2E_BIN/$bin is missing: run scripts/e2e-build.sh first"
	done
	if load_env && { is_ours "${E2E_ETCD_PID:-}" etcd || is_ours "${E2E_APISERVER_PID:-}" kube-apiserver ||
		is_ours "${E2E_SCHEDULER_PID:-}" kube-scheduler || is_ours "${E2E_KCM_PID:-}" kube-controller-manager; }; then
		die "a cluster is already running in $DIR (run: $0 stop $DIR)"
	fi
	rm -rf "$DIR/etcd" "$DIR/certs" "$DIR"/certs-* "$DIR/env" "$DIR/tokens.csv" "$DIR/sa.key" \
		"$DIR"/*.kubeconfig "$DIR"/*.log "$DIR/audit-policy.yaml" "$DIR"/client-ca.*
	mkdir -p "$DIR/certs"
	chmod 700 "$DIR"
	if [ "$E2E_AUDIT" = 1 ]; then
		# Metadata: who did which verb on which resource and the answer, never a body (no
		# ConfigMap data, no tokens). Everyone else's requests are not logged at all.
		cat >"$DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    users: ["${E2E_CONTROLLER_USER}"]
  - level: None
EOF
		say "audit log of ${E2E_CONTROLLER_USER}: $DIR/audit.log"
	fi

	say "generating the service-account key and tokens in $DIR"
	(
		umask 077
		openssl genrsa -out "$DIR/sa.key" 2048 2>/dev/null
	) || die "openssl genrsa failed"
	# The CA of client certificates, made once per cluster (a restart keeps trusting it).
	(
		umask 077
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
			-keyout "$DIR/client-ca.key" -out "$DIR/client-ca.crt" -days 7 \
			-subj "/CN=e2e-client-ca" 2>/dev/null
	) || die "openssl req (the client CA) failed"
	E2E_ADMIN_TOKEN=$(openssl rand -hex 32)
	E2E_CONTROLLER_TOKEN=$(openssl rand -hex 32)
	scheduler_token=$(openssl rand -hex 32)
	kcm_token=$(openssl rand -hex 32)
	# token,user,uid,"groups": the admin is cluster-admin through system:masters; the
	# controller is in no group, so it can do only what RBAC grants it; the scheduler and the
	# controller-manager are the users the default bootstrap ClusterRoleBindings name.
	(
		umask 077
		printf '%s,admin,e2e-admin,"system:masters"\n' "$E2E_ADMIN_TOKEN" >"$DIR/tokens.csv"
		printf '%s,%s,e2e-controller\n' "$E2E_CONTROLLER_TOKEN" "$E2E_CONTROLLER_USER" >>"$DIR/tokens.csv"
		printf '%s,system:kube-scheduler,e2e-scheduler\n' "$scheduler_token" >>"$DIR/tokens.csv"
		printf '%s,system:kube-controller-manager,e2e-kcm\n' "$kcm_token" >>"$DIR/tokens.csv"
	)

	# A failed start must not leave an etcd behind.
	trap 'if [ $? -ne 0 ]; then stop_pid "${E2E_KCM_PID:-}" kube-controller-manager; stop_pid "${E2E_SCHEDULER_PID:-}" kube-scheduler; stop_pid "${E2E_APISERVER_PID:-}" kube-apiserver; stop_pid "${E2E_ETCD_PID:-}" etcd; fi' EXIT
	for attempt in 1 2 3 4 5; do
		read -r client peer E2E_APISERVER_PORT <<<"$(free_ports 3)"
		start_etcd "$client" "$peer" && break
		[ "$attempt" -lt 5 ] || die "could not start etcd on free ports after 5 attempts"
	done
	write_env
	for attempt in 1 2 3 4 5; do
		start_apiserver && break
		[ "$attempt" -lt 5 ] || die "could not start kube-apiserver on a free port after 5 attempts"
		read -r E2E_APISERVER_PORT <<<"$(free_ports 1)"
	done
	write_env
	write_kubeconfig "$DIR/admin.kubeconfig" admin "$E2E_ADMIN_TOKEN"
	write_kubeconfig "$DIR/controller.kubeconfig" "$E2E_CONTROLLER_USER" "$E2E_CONTROLLER_TOKEN"
	write_kubeconfig "$DIR/kube-scheduler.kubeconfig" system:kube-scheduler "$scheduler_token"
	write_kubeconfig "$DIR/kube-controller-manager.kubeconfig" system:kube-controller-manager "$kcm_token"
	start_scheduler
	write_env
	start_controller_manager
	write_env
	trap - EXIT
	say "ready: source $DIR/env; kubectl --kubeconfig $DIR/admin.kubeconfig"
}

cmd_stop_apiserver() {
	load_env || {
		say "no cluster in $DIR"
		return 0
	}
	stop_pid "${E2E_APISERVER_PID:-}" kube-apiserver
}

cmd_start_apiserver() {
	load_env || die "no cluster in $DIR (run: $0 start $DIR)"
	is_ours "${E2E_ETCD_PID:-}" etcd || die "etcd is not running in $DIR (run: $0 start $DIR)"
	if is_ours "${E2E_APISERVER_PID:-}" kube-apiserver; then
		die "kube-apiserver is already running (pid $E2E_APISERVER_PID)"
	fi
	# The port is fixed for the cluster's lifetime (it is in the kubeconfigs and the issuer);
	# a just-stopped listener frees it at once, but another process may hold it briefly.
	local attempt
	for attempt in 1 2 3 4 5 6 7 8 9 10; do
		start_apiserver && break
		[ "$attempt" -lt 10 ] || die "port ${E2E_APISERVER_PORT} stays taken"
		sleep 1
	done
	write_env
}

cmd_stop() {
	load_env || {
		say "no cluster in $DIR"
		return 0
	}
	stop_pid "${E2E_SCHEDULER_PID:-}" kube-scheduler
	stop_pid "${E2E_KCM_PID:-}" kube-controller-manager
	stop_pid "${E2E_APISERVER_PID:-}" kube-apiserver
	stop_pid "${E2E_ETCD_PID:-}" etcd
}

cmd_status() {
	load_env || die "no cluster in $DIR"
	local ok=0 code
	if is_ours "${E2E_ETCD_PID:-}" etcd; then say "etcd: running (pid $E2E_ETCD_PID)"; else
		say "etcd: not running"
		ok=1
	fi
	local name pid
	for name in kube-scheduler kube-controller-manager; do
		pid=$E2E_SCHEDULER_PID
		[ "$name" = kube-scheduler ] || pid=$E2E_KCM_PID
		if is_ours "${pid:-}" "$name"; then say "$name: running (pid $pid)"; else
			say "$name: not running"
			ok=1
		fi
	done
	if is_ours "${E2E_APISERVER_PID:-}" kube-apiserver; then
		code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$E2E_CA" \
			-H "Authorization: Bearer ${E2E_ADMIN_TOKEN}" "${E2E_SERVER}/readyz" 2>/dev/null) || code=none
		say "kube-apiserver: running (pid $E2E_APISERVER_PID), /readyz ${code}"
		[ "$code" = 200 ] || ok=1
	else
		say "kube-apiserver: not running"
		ok=1
	fi
	return "$ok"
}

case "$cmd" in
start) cmd_start ;;
stop) cmd_stop ;;
stop-apiserver) cmd_stop_apiserver ;;
start-apiserver) cmd_start_apiserver ;;
restart-apiserver)
	cmd_stop_apiserver
	cmd_start_apiserver
	;;
status) cmd_status ;;
env)
	[ -f "$DIR/env" ] || die "no cluster in $DIR"
	cat "$DIR/env"
	;;
*) usage ;;
esac
