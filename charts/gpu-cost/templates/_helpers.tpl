{{/* Names, labels and small computed values shared by the templates. */}}

{{/* The chart name, or nameOverride. */}}
{{- define "gpu-cost.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of object names: fullnameOverride, else the release name when it already contains
the chart name, else "<release>-<chart>". 52 characters leave room for "-controller".
*/}}
{{- define "gpu-cost.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Name of the controller's objects: Deployment, RBAC, default ServiceAccount and Lease. */}}
{{- define "gpu-cost.controllerName" -}}
{{- printf "%s-controller" (include "gpu-cost.fullname" .) -}}
{{- end -}}

{{- define "gpu-cost.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels: stable for the life of a release (a Deployment's selector is immutable). */}}
{{- define "gpu-cost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpu-cost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* Labels of every object. */}}
{{- define "gpu-cost.labels" -}}
helm.sh/chart: {{ include "gpu-cost.chart" . }}
{{ include "gpu-cost.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gpu-cost
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "gpu-cost.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gpu-cost.controllerName" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
"true" when the ServiceMonitor scrapes /metrics on the probe port (plain HTTP, no guard, on its
own server and thread, so no load on the API delays the scrape): with probePort, and neither
auth.enabled (the controller serves /metrics there only without --auth-delegate) nor
tls.secretName (the scrape would leave TLS for plain HTTP). Otherwise it scrapes port http.
*/}}
{{- define "gpu-cost.scrapesProbePort" -}}
{{- if and .Values.serviceMonitor.enabled .Values.probePort (not .Values.auth.enabled) (not .Values.tls.secretName) -}}
true
{{- end -}}
{{- end -}}

{{- define "gpu-cost.leaseName" -}}
{{- default (include "gpu-cost.controllerName" .) .Values.leaderElection.leaseName -}}
{{- end -}}

{{- define "gpu-cost.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
The configuration file: .Values.config as JSON, without the optional sections (prices, tco) when
they are empty, since an empty catalog or cost model is an error to the controller and "keep the
built-in one" to the user.
*/}}
{{- define "gpu-cost.configJson" -}}
{{- $cfg := omit .Values.config "prices" "tco" -}}
{{- with .Values.config.prices }}{{ $_ := set $cfg "prices" . }}{{ end -}}
{{- with .Values.config.tco }}{{ $_ := set $cfg "tco" . }}{{ end -}}
{{- /* usage sources: "enabled" is the chart's switch; off is null, as the parser takes it */ -}}
{{- with .Values.config.usage }}
{{- $u := omit . "dcgm" "prometheus" -}}
{{- $d := omit (.dcgm | default dict) "enabled" -}}
{{- if not $d.service }}{{ $d = omit $d "service" }}{{ end -}}
{{- $_ := set $u "dcgm" (ternary $d nil (.dcgm | default dict).enabled) -}}
{{- $p := omit (.prometheus | default dict) "enabled" -}}
{{- if not $p.bearer_token_file }}{{ $p = omit $p "bearer_token_file" }}{{ end -}}
{{- $_ := set $u "prometheus" (ternary $p nil (.prometheus | default dict).enabled) -}}
{{- $_ := set $cfg "usage" $u -}}
{{- end -}}
{{- /* report.timezone: empty is the fixed utc_offset; set, it replaces it (one or the other) */ -}}
{{- with .Values.config.report }}
{{- $r := omit . "timezone" -}}
{{- if .timezone }}{{ $r = omit $r "utc_offset" }}{{ $_ := set $r "timezone" .timezone }}{{ end -}}
{{- $_ := set $cfg "report" $r -}}
{{- end -}}
{{- toPrettyJson $cfg -}}
{{- end -}}

{{/*
Namespaces the controller emits budget Events in (config.budgets.events), sorted: the team's
namespace from report.team_namespaces for a team budget, the budget's own namespace for a
namespace budget, the workload's (Kind/namespace/name) for a workload budget, else the release
namespace.
*/}}
{{- define "gpu-cost.eventNamespaces" -}}
{{- $b := .Values.config.budgets | default dict -}}
{{- $seen := dict -}}
{{- if $b.events -}}
{{- $teams := dig "report" "team_namespaces" dict .Values.config -}}
{{- range $b.items | default list -}}
{{- if and (eq .scope "team") (hasKey $teams .name) -}}
{{- $_ := set $seen (get $teams .name) true -}}
{{- else if eq .scope "namespace" -}}
{{- $_ := set $seen .name true -}}
{{- else if and (eq .scope "workload") (eq (len (splitList "/" .name)) 3) -}}
{{- $_ := set $seen (index (splitList "/" .name) 1) true -}}
{{- else -}}
{{- $_ := set $seen $.Release.Namespace true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- keys $seen | sortAlpha | toJson -}}
{{- end -}}

{{/*
Namespaces of the per-team report copies (report.team_namespaces), sorted. Every copy is named
gpu-cost-report-weekly-latest, so two teams in one namespace would overwrite each other's, and a
team in the release namespace would overwrite the whole cluster's: both are refused.
*/}}
{{- define "gpu-cost.teamNamespaces" -}}
{{- $seen := dict -}}
{{- range $team, $ns := (dig "report" "team_namespaces" dict .Values.config) -}}
{{- if eq $ns $.Release.Namespace -}}
{{- fail (printf "config.report.team_namespaces.%s: %q is the release namespace, where the team's copy would replace the cluster's own gpu-cost-report-weekly-latest" $team $ns) -}}
{{- end -}}
{{- if hasKey $seen $ns -}}
{{- fail (printf "config.report.team_namespaces: teams %q and %q share the namespace %q, where their copies would overwrite each other" (get $seen $ns) $team $ns) -}}
{{- end -}}
{{- $_ := set $seen $ns $team -}}
{{- end -}}
{{- toJson (keys $seen | sortAlpha) -}}
{{- end -}}
