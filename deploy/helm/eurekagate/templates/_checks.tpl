{{/* Refuses values that would otherwise be ignored: each mode's own settings given to the other, and a Caddyfile with extra options for the chart's Caddyfile. */}}
{{- define "eurekagate.checks" -}}
{{- if and (eq .Values.mode "gateway") .Values.registry.settings -}}
{{- fail "values: registry.settings: cmd/eureka's settings apply in registry mode only (mode is gateway: put them in the Caddyfile's eureka block with gateway.extraGlobalOptions)" -}}
{{- end -}}
{{- if and (eq .Values.mode "registry") (or .Values.gateway.extraGlobalOptions .Values.gateway.caddyfile) -}}
{{- fail "values: gateway: applies in gateway mode only (mode is registry)" -}}
{{- end -}}
{{- if and .Values.gateway.caddyfile .Values.gateway.extraGlobalOptions -}}
{{- fail "values: gateway.extraGlobalOptions: added to the chart's Caddyfile, which gateway.caddyfile replaces: put them in yours" -}}
{{- end -}}
{{- range $flag, $value := .Values.registry.settings -}}
{{- if has $flag (list "addr" "peers" "peers-dns") -}}
{{- fail (printf "values: registry.settings.%s: set by the chart (ports.registry, the headless Service)" $flag) -}}
{{- end -}}
{{- end -}}
{{- end -}}
