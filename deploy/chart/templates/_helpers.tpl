{{/* Names and labels shared by every object of the chart. */}}

{{/* The name of every object: the release name, unless it already names the chart. */}}
{{- define "kea.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kea.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kea.labels" -}}
{{ include "kea.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "kea.serviceAccountName" -}}
{{- default (include "kea.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* The configuration file the ConfigMap holds: `config` as an AgentConfiguration. */}}
{{- define "kea.configFile" -}}
apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
{{ toYaml .Values.config }}
{{- end -}}

{{/* observe.hostRoot joined with one of the host paths the configuration reads. */}}
{{- define "kea.inHostRoot" -}}
{{- $root := trimSuffix "/" (default "/" .root) -}}
{{- printf "%s%s" $root .path -}}
{{- end -}}
