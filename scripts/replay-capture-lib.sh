# shellcheck shell=bash
# Functions shared by the scripts that record replay scenarios from real
# zfs-fuse pools (collector/testdata/replay/capture-zfs-fuse.sh,
# deploy/demo/capture.sh); sourced, not run. The format is in
# internal/runner/REPLAY.md.
#
# A script sets, before capture_start:
#   out    the replay directory to write (one numbered subdirectory a step)
#   work   the directory of the file vdevs and mount points: a fixed path,
#          so that the vdev paths in the captures stay the same from one
#          capture to the next
#   pools  the pools it creates, in the order zpool status prints them
# then creates its pools and calls step for each state. Needs root and a
# running zfs-fuse daemon.

# capture_start checks the machine, empties the replay directory's old
# steps and the work directory, and destroys the pools on exit.
capture_start() {
	if [ "$(id -u)" != 0 ]; then
		echo "$0: zfs-fuse pools need root" >&2
		exit 1
	fi
	if ! zpool list >/dev/null 2>&1; then
		echo "$0: no zfs-fuse daemon answers (start one with: zfs-fuse --pidfile FILE)" >&2
		exit 1
	fi
	local p
	for p in "${pools[@]}"; do
		if zpool list "$p" >/dev/null 2>&1; then
			echo "$0: a pool named $p exists already; this script creates and destroys its own" >&2
			exit 1
		fi
	done
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	rm -rf "$out"/[0-9][0-9][0-9]
	record_tmp=$(mktemp -d)
	trap capture_cleanup EXIT
	rm -rf "$work" && mkdir -p "$work"
}

# capture_cleanup destroys the pools once background writers have ended
# (zfs-fuse can keep a pool busy for good when it is destroyed under a
# writer), and removes the work directory.
capture_cleanup() {
	local p
	wait || true
	for p in "${pools[@]}"; do
		for _ in 1 2 3 4 5; do zpool destroy -f "$p" 2>/dev/null && break; zpool list "$p" &>/dev/null || break; sleep 1; done
	done
	rm -rf "$work" "$record_tmp"
}

# record DIR NOTE COMMAND...: runs the command, keeps stdout, stderr, exit.
# It forks little besides the command: the commands of a step should see
# one moment of a resilver, and each fork is slow on a busy machine.
record() {
	local dir=$1 note=$2
	shift 2
	local name=$* line status=0
	name=${name// /_}
	name=${name//\//%2F}.txt
	local stdout=$record_tmp/stdout stderr=$record_tmp/stderr
	"$@" >"$stdout" 2>"$stderr" || status=$?
	{
		echo "# command: $*"
		[ -n "$note" ] && echo "# notes: $note"
		echo "# exit: $status"
		while IFS= read -r line; do echo "# stderr: $line"; done <"$stderr"
		echo "# ---"
		cat "$stdout"
	} >"$dir/$name"
}

# step N STATE: records the commands the exporter runs against the current
# state into out/NNN, and STATE into out/NNN/STATE: step_commands, then
# step_stream.
step() {
	step_commands "$@"
	step_stream "$1"
}

# step_commands N STATE: the commands that return at once, the status
# commands first so that they see one moment, in the order the exporter
# tries them at detection (internal/zfs/capabilities.go).
step_commands() {
	local dir args p
	dir="$out/$(printf '%03d' "$1")"
	rm -rf "$dir" && mkdir -p "$dir"
	echo "$2" >"$dir/STATE"
	for args in "status -j --json-int -t -i" "status -j --json-int" "status -s -p -t -i" "status -s -p" "status -p" "status" \
		"get -Hp all" "get -H all" "get all ${pools[*]}" "iostat -v -p"; do
		# shellcheck disable=SC2086
		record "$dir" "" zpool $args
	done
	for p in "${pools[@]}"; do record "$dir" "" zpool get -Hp all "$p" all-vdevs; done
}

# step_stream N: the sampler's stream, which runs forever; four reports of
# it are kept.
step_stream() {
	{
		echo "# command: zpool iostat -v 1"
		echo "# notes: stopped after 4.5 s (four reports)"
		echo "# exit: 0"
		echo "# ---"
		timeout 4.5 zpool iostat -v 1 || true
	} >"$out/$(printf '%03d' "$1")/zpool_iostat_-v_1.txt"
}

# disk NAME [SIZE]: makes a sparse file vdev (128M unless SIZE) in the work
# directory and prints its path.
disk() {
	truncate -s "${2:-128M}" "$work/$1"
	echo "$work/$1"
}

# write FILE MIB: writes MIB MiB of random data and syncs.
write() {
	dd if=/dev/urandom of="$1" bs=1M count="$2" status=none
	sync
}
