// Package compose brings up docker-compose.yml's demo profile on a Docker
// engine of its own and checks the stack end to end: Prometheus scrapes
// the demo exporter and loads the project's rules, and the demo's
// degraded pool raises an alert that reaches Alertmanager.
//
// Nothing is pulled from a registry. The base images are a Debian root
// made by debootstrap, with Debian's prometheus-alertmanager, and the Go
// toolchain of the machine; Prometheus is docker-compose.yml's version,
// 3.16, built from its Go module (tests/internal/prom3), since the compose
// configuration takes settings Debian's 2.42 refuses; the exporter's image
// is built by deploy/docker/Dockerfile from them. The
// engine runs with --bridge=none, so the containers use the host's
// network: the test's override file (see stack_test.go) moves every
// listener to a free port on 127.0.0.1 and points Prometheus there. The
// compose CLI is Docker Compose v5, built from the module of composecli/.
package compose
