{{/*
The chart's name, or nameOverride: the app.kubernetes.io/name label.
*/}}
{{- define "zpool-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: the release name, with the chart's name appended unless
the release name already holds it. 63 characters at most, the limit of a
DNS label, which names of Services must be.
*/}}
{{- define "zpool-exporter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The chart's name and version, for the helm.sh/chart label.
*/}}
{{- define "zpool-exporter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "zpool-exporter.labels" -}}
helm.sh/chart: {{ include "zpool-exporter.chart" . }}
{{ include "zpool-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels that select the pods. They never change across upgrades, because a
DaemonSet's selector cannot be changed in place.
*/}}
{{- define "zpool-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "zpool-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The ServiceAccount the pods run as.
*/}}
{{- define "zpool-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "zpool-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
