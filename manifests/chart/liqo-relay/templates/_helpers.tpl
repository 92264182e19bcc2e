{{/* The chart's name. */}}
{{- define "liqo-relay.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's base name for objects. */}}
{{- define "liqo-relay.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "liqo-relay.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "liqo-relay.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "liqo-relay.operator" -}}{{ include "liqo-relay.fullname" . | trunc 54 | trimSuffix "-" }}-operator{{- end -}}
{{- define "liqo-relay.inject" -}}{{ include "liqo-relay.fullname" . | trunc 56 | trimSuffix "-" }}-inject{{- end -}}
{{- define "liqo-relay.consumerGrant" -}}{{ include "liqo-relay.fullname" . | trunc 47 | trimSuffix "-" }}-consumer-operator{{- end -}}

{{/* The relay image. */}}
{{- define "liqo-relay.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Labels on every object; call with (dict "ctx" . "component" "x"). */}}
{{- define "liqo-relay.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "liqo-relay.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/version: {{ .ctx.Values.image.tag | default .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: liqo-relay
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{/* Selector labels of a component's pods. */}}
{{- define "liqo-relay.selector" -}}
app.kubernetes.io/name: {{ include "liqo-relay.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The container securityContext of the operator and the webhook. */}}
{{- define "liqo-relay.restricted" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Liveness and readiness probes on the health port; call with (dict "live" .. "ready" ..). */}}
{{- define "liqo-relay.probes" -}}
livenessProbe:
  httpGet: {path: /healthz, port: health}
  {{- toYaml .live | nindent 2 }}
readinessProbe:
  httpGet: {path: /readyz, port: health}
  {{- toYaml .ready | nindent 2 }}
{{- end -}}

{{/* The sidecar file of relay inject (docs/inject.md, "The sidecar file"):
.Values.sidecar with image defaulting to the chart's image, and
networkPolicy.enabled / metricsFrom defaulting to the chart's networkPolicy
values, so the gateway pods' policy follows the same switch as the chart's
own pods. */}}
{{- define "liqo-relay.sidecarFile" -}}
{{- $s := deepCopy .Values.sidecar -}}
{{- if not $s.image }}{{ $_ := set $s "image" (include "liqo-relay.image" .) }}{{ end -}}
{{- $np := deepCopy (default dict $s.networkPolicy) -}}
{{- if not (hasKey $np "enabled") }}{{ $_ := set $np "enabled" .Values.networkPolicy.enabled }}{{ end -}}
{{- if not (hasKey $np "metricsFrom") }}{{ $_ := set $np "metricsFrom" .Values.networkPolicy.metricsFrom }}{{ end -}}
{{- $_ := set $s "networkPolicy" $np -}}
{{- toYaml $s -}}
{{- end -}}

{{/* The rules of the object of kind .kind in the chart file .file (a copy
of manifests/rbac, the one source of the components' RBAC), with the
resourceNames of the resources named in .names replaced (by the one name,
or by the list when the value is a list):
(dict "ctx" . "file" "files/rbac/x.yaml" "kind" "Role" "names" (dict "secrets" "k")). */}}
{{- define "liqo-relay.rbacRules" -}}
{{- $rules := list -}}
{{- $names := default dict .names -}}
{{- $kind := .kind -}}
{{- range splitList "\n---\n" (.ctx.Files.Get .file) -}}
{{- $o := fromYaml . -}}
{{- if eq (toString $o.kind) $kind -}}
{{- range $o.rules -}}
{{- $r := deepCopy . -}}
{{- if hasKey $r "resourceNames" -}}
{{- range $r.resources }}{{ if hasKey $names . }}{{ $v := get $names . }}{{ if kindIs "slice" $v }}{{ $_ := set $r "resourceNames" $v }}{{ else }}{{ $_ := set $r "resourceNames" (list $v) }}{{ end }}{{ end }}{{ end -}}
{{- end -}}
{{- $rules = append $rules $r -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $rules }}{{ fail (printf "%s has no %s with rules" .file .kind) }}{{ end -}}
{{- toYaml $rules -}}
{{- end -}}
