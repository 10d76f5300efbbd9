// Package kubernetes tests the Helm chart of deploy/helm/zpool-exporter and
// the plain manifests of deploy/kubernetes rendered from it, with Helm as a
// Go library: helm lint, helm template, and every rendered object decoded
// strictly into its Kubernetes or Prometheus Operator Go type. No cluster
// and no network: the tests run in the quick tier.
package kubernetes
