{{/* The release's objects' name: the release's, followed by the chart's unless it holds it. */}}
{{- define "eurekagate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The headless Service whose records are the peers (at most 63 characters, a DNS label). */}}
{{- define "eurekagate.peersName" -}}
{{- printf "%s-peers" (include "eurekagate.fullname" . | trunc 57 | trimSuffix "-") -}}
{{- end -}}

{{/* The peer source: the headless Service's name at the registry's port. With auth, the nodes' credential, from the environment. */}}
{{- define "eurekagate.peersURL" -}}
{{- $cred := "" -}}
{{- if .Values.auth.existingSecret -}}
{{- $cred = ternary "$(EUREKAGATE_AUTH_USER):$(EUREKAGATE_AUTH_PASSWORD)@" "{$EUREKAGATE_AUTH_USER}:{$EUREKAGATE_AUTH_PASSWORD}@" (eq .Values.mode "registry") -}}
{{- end -}}
{{- printf "http://%s%s.%s.svc.%s:%d/eureka/" $cred (include "eurekagate.peersName" .) .Release.Namespace .Values.peers.clusterDomain (int .Values.ports.registry) -}}
{{- end -}}

{{- define "eurekagate.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "eurekagate.labels" -}}
{{ include "eurekagate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: {{ .Values.mode }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The image of the mode. */}}
{{- define "eurekagate.image" -}}
{{- $img := index .Values.image (.Values.mode) -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}
