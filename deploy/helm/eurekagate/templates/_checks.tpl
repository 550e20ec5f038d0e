{{/* Refuses values that would otherwise be ignored or contradict the chart: each mode's own settings given to the other, a Caddyfile with extra options for the chart's Caddyfile, and registry settings the chart makes itself or its probes depend on. */}}
{{- define "eurekagate.checks" -}}
{{- if and (eq .Values.mode "gateway") (or .Values.registry.application .Values.registry.flags) -}}
{{- fail "values: registry: cmd/eureka's settings apply in registry mode only (mode is gateway: put them in the Caddyfile's eureka block with gateway.extraGlobalOptions)" -}}
{{- end -}}
{{- if and (eq .Values.mode "registry") (or .Values.gateway.extraGlobalOptions .Values.gateway.caddyfile) -}}
{{- fail "values: gateway: applies in gateway mode only (mode is registry)" -}}
{{- end -}}
{{- if and .Values.gateway.caddyfile .Values.gateway.extraGlobalOptions -}}
{{- fail "values: gateway.extraGlobalOptions: added to the chart's Caddyfile, which gateway.caddyfile replaces: put them in yours" -}}
{{- end -}}
{{- range $flag, $value := .Values.registry.flags -}}
{{- if has $flag (list "addr" "peers" "peers-dns" "peers-file") -}}
{{- fail (printf "values: registry.flags.%s: set by the chart (ports.registry, the headless Service)" $flag) -}}
{{- end -}}
{{- end -}}
{{- $app := .Values.registry.application -}}
{{- if hasKey (dig "server" dict $app) "port" -}}
{{- fail "values: registry.application.server.port: set by the chart (ports.registry)" -}}
{{- end -}}
{{- with (dig "eureka" "client" dict $app) -}}
{{- if or (hasKey . "service-url") (hasKey . "serviceUrl") -}}
{{- fail "values: registry.application.eureka.client.service-url: the peers are the chart's (the headless Service, -peers-dns)" -}}
{{- end -}}
{{- end -}}
{{- if hasKey (dig "management" "server" dict $app) "port" -}}
{{- fail "values: registry.application.management.server.port: the probes reach the actuator on ports.registry" -}}
{{- end -}}
{{- with (dig "management" "endpoints" "web" "base-path" "" $app) -}}
{{- if not (and (hasPrefix (printf "%s/" .) $.Values.probes.livenessPath) (hasPrefix (printf "%s/" .) $.Values.probes.readinessPath)) -}}
{{- fail (printf "values: registry.application.management.endpoints.web.base-path: %s: the probes' paths (probes.livenessPath, probes.readinessPath) must be under it" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
