GO        ?= go
STATICCHECK_VERSION ?= v0.8.2
BINARIES  := zpool_exporter zpool_bench

.PHONY: build dist packages cross test test-short test-all testbed story compose-test manifests mixin pictures check fmt vet staticcheck bench bench-profile fuzz

# Every OS the exporter runs on; a build-tag mistake fails here.
PLATFORMS ?= linux/amd64 linux/arm64 freebsd/amd64 illumos/amd64 solaris/amd64

# The version, revision, branch, build user and date are stamped by the
# -ldflags of scripts/dist.sh (VERSION, REVISION, ... override them).
build:
	flags=$$(./scripts/dist.sh ldflags) && for bin in $(BINARIES); do \
		CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$$flags" -o $$bin ./cmd/$$bin || exit 1; \
	done

# Release tarballs for every platform, a .deb and an .rpm for each Linux
# one (PACKAGES, packaging/), and their sha256sums.txt, in DIST_DIR (dist/
# unless set); see scripts/dist.sh.
PACKAGES ?= deb rpm
dist:
	PLATFORMS='$(PLATFORMS)' PACKAGES='$(PACKAGES)' GO='$(GO)' ./scripts/dist.sh

# The same for the Linux platforms alone: their tarballs and packages.
packages:
	PLATFORMS='$(filter linux/%,$(PLATFORMS))' PACKAGES='$(PACKAGES)' GO='$(GO)' ./scripts/dist.sh

cross:
	@for p in $(PLATFORMS); do \
		echo "build $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/... || exit 1; \
	done

# The quick tier: parsers, collectors over captured outputs, the binary over
# a replay; tests that need zfs-fuse, root or promtool are skipped.
test-short:
	$(GO) test -short -count=1 ./...
	cd dashboards && $(GO) test -short -count=1 ./...
	cd tests && $(GO) test -short -count=1 ./...
	cd packaging && $(GO) test -short -count=1 ./...

test:
	$(GO) test -count=1 ./...
	cd dashboards && $(GO) test -count=1 ./...
	cd tests && $(GO) test -count=1 ./...
	cd packaging && $(GO) test -count=1 ./...

# Everything, as CI runs it (root: installs the packages of
# scripts/test-packages.txt that are missing, starts zfs-fuse).
test-all:
	./scripts/test-all.sh

# The walk on real OpenZFS in a qemu guest, for every version the test bed
# builds (root; builds or reuses the guest images).
ZPE_OPENZFS ?= 2.4,2.3
testbed:
	ZPE_OPENZFS=$(ZPE_OPENZFS) $(GO) test -tags testbed -count=1 -timeout 120m -v -run TestOpenZFSWalk ./testbed/openzfs/

# Records, in the OpenZFS 2.4 guest, the story that the datasets and ARC
# boards' pictures are drawn from (about ten minutes; make pictures draws
# them): a pool of a household's datasets used in rounds.
story:
	ZPE_STORY=$(CURDIR)/tests/prometheus3/testdata/openzfs-2.4-story $(GO) test -tags testbed -count=1 -timeout 60m -v -run TestOpenZFSStory ./testbed/openzfs/

# docker-compose.yml's demo profile brought up on a Docker engine of the
# test's own (root, Debian's docker.io and debootstrap; no registry), the
# demo's alert followed to Alertmanager, and the stack taken down; part of
# test-all too.
compose-test:
	cd tests && $(GO) test -count=1 -v -timeout 20m -run TestComposeDemoStack ./compose/

# Rewrites deploy/kubernetes/*.yaml, the Helm chart rendered with its
# default values, through the golden test that otherwise checks them.
manifests:
	cd tests && $(GO) test -count=1 -run TestPlainManifests ./kubernetes -update

# Rewrites the dashboards and rules in dashboards/out, and their copies in
# the Helm chart, from their Go code. SELECTOR='job="node"' makes the rules
# pick another job than zfs.
mixin:
	cd dashboards && $(GO) run ./cmd/mixin $(if $(SELECTOR),-selector '$(SELECTOR)')

# Redraws docs/dashboards/*.svg, the pictures of docs/dashboards.md, from
# Prometheus 3.16 over replays of the OpenZFS 2.4 guest: the pools, I/O,
# scans and benchmark boards over its walk, the datasets and ARC boards
# over its story (make story records it; about 3 minutes in all); then
# docs/status-page.png, the status page over the demo replay in headless
# Chromium, and docs/benchmark/, zpool_bench's comparison of a mirror and a
# raidz1 (zfs-fuse).
pictures:
	cd tests && ZPE_PICTURES=$(CURDIR)/docs/dashboards $(GO) test -count=1 -v -run 'TestDrawDashboardsFromTheGuestWalk|TestDrawDatasetsAndARCFromTheStory' ./prometheus3/
	cd tests && ZPE_PICTURES=$(CURDIR)/docs $(GO) test -count=1 -v -run TestDemoReplay ./browser/
	ZPE_PICTURES=$(CURDIR)/docs/benchmark $(GO) test -count=1 -v -run TestCompareMirrorAndRaidz1 ./cmd/zpool_bench/

check: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	$(GO) vet -tags openzfsguest,testbed ./testbed/...
	cd dashboards && $(GO) vet ./...
	cd tests && $(GO) vet ./...
	cd packaging && $(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags openzfsguest,testbed ./testbed/...
	cd dashboards && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	cd tests && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	cd packaging && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The Go benchmarks of the collectors and the ZFS parsers, then the scale
# run of internal/testkit/scrapebench: zpool_exporter, and pdf/zfs_exporter beside
# it when PEER is there, over the guest's captures, generated hosts of 10
# to 10,000 leaves in 1 and 10 pools, and one of 10,000 datasets and
# 100,000 snapshots through a stand-in zfs that takes a minute to list the
# snapshots, into one table (also written to BENCH_DIR/bench.md). About 12
# minutes on 2 idle cores; BENCH_SIZES picks
# fewer hosts: make bench BENCH_SIZES='small 1x1000'.
BENCH_SIZES ?= small 1x10 1x100 1x1000 1x5000 1x10000 10x10 10x100 10x1000 10x5000 10x10000 1x8:10000d:100000s
BENCH_DIR ?= $(or $(TMPDIR),/tmp)/zpool-exporter-bench
PEER ?= ../shared/peers/pdf_zfs_exporter
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./collector/... ./internal/zfs/...
	$(GO) build -o $(BENCH_DIR)/bin/zpool_exporter ./cmd/zpool_exporter
	$(GO) build -o $(BENCH_DIR)/bin/zpool ./internal/testkit/hostgen/cmd/zpool
	$(GO) build -o $(BENCH_DIR)/bin/zfs ./internal/testkit/hostgen/cmd/zfs
	$(GO) run ./internal/testkit/scrapebench/cmd/scrapebench -exporter $(BENCH_DIR)/bin/zpool_exporter \
		-standin $(BENCH_DIR)/bin/zpool -zfs-standin $(BENCH_DIR)/bin/zfs -peer '$(PEER)' -hosts '$(BENCH_SIZES)' -work $(BENCH_DIR) \
		-out $(BENCH_DIR)/bench.md -revision "$$(git describe --always --dirty 2>/dev/null)"

# A CPU profile of one gzipped /metrics over one pool of 1,000 leaves
# (BenchmarkGeneratedHost), and its top functions, cumulative and flat.
# The profile holds the writing of the host too (hostgen.*).
bench-profile:
	mkdir -p $(BENCH_DIR)
	$(GO) test -run '^$$' -bench 'GeneratedHost/leaves=1000$$' -benchtime 40x -benchmem \
		-cpuprofile $(BENCH_DIR)/cpu-1000.pprof -o $(BENCH_DIR)/collector.test ./collector/
	$(GO) tool pprof -top -cum -nodecount 30 $(BENCH_DIR)/collector.test $(BENCH_DIR)/cpu-1000.pprof
	$(GO) tool pprof -top -nodecount 30 $(BENCH_DIR)/collector.test $(BENCH_DIR)/cpu-1000.pprof

# Runs each fuzz target of every package that has one for FUZZTIME (the
# seeds alone run in every go test). The targets start from the project's
# fixtures and add the shared samples when they are there;
# ZPE_SHARED=/nonexistent fuzzes without them.
FUZZTIME ?= 30s
fuzz:
	@set -e; \
	list=$$($(GO) list -f '{{$$d := .Dir}}{{.ImportPath}}{{range .TestGoFiles}} {{$$d}}/{{.}}{{end}}{{range .XTestGoFiles}} {{$$d}}/{{.}}{{end}}' ./...); \
	pkgs=$$(echo "$$list" | while read -r pkg files; do \
		if [ -n "$$files" ] && grep -q '^func Fuzz' $$files; then echo $$pkg; fi; \
	done); \
	[ -n "$$pkgs" ] || { echo "no fuzz targets found"; exit 1; }; \
	for pkg in $$pkgs; do \
		targets=$$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); \
		for f in $$targets; do \
			echo "fuzz $$pkg $$f for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done
