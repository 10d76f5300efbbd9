// Package deploy checks the deployment files of the repository with the
// tools that read them: docker-compose.yml with compose-go, the Prometheus
// and Alertmanager configurations with promtool and amtool, the systemd
// unit with systemd-analyze, the FreeBSD rc.d script with sh and a stand-in
// for rc.subr, the illumos SMF manifest with an XML parser and xmllint, and
// the web configuration with exporter-toolkit and a running exporter. It has
// tests only.
package deploy
