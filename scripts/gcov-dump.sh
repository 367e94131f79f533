#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gcov-dump.sh CONSOLE DIR: the gcov counts a coverage boot dumped on its
# console (guest-init.sh, dump_gcov: a gzipped tar in base64 between
# "kvmgcov: begin" and "kvmgcov: end N MD5"), checked and unpacked into
# DIR/dump.  Fails, saying why in one line, when there is no dump, when a
# line was lost (not N lines) or garbled (not the MD5), or when the archive
# does not unpack: counts from half a dump would read as code never run.
set -uo pipefail
log=$1 dir=$2
rm -rf "$dir/dump" "$dir/dump.b64" "$dir/dump.tgz" "$dir/end"
mkdir -p "$dir/dump"
tr -d '\r' <"$log" 2>/dev/null | awk -v out="$dir/dump.b64" '
	/kvmgcov: begin$/ { on = 1; printf "" > out; next }
	on && /kvmgcov: end / { sub(/.*kvmgcov: end /, ""); print; on = 0; next }
	on && /kvmgcov: / { sub(/.*kvmgcov: /, ""); print > out }' >"$dir/end"
read -r lines md5 <"$dir/end" 2>/dev/null || { echo "no gcov dump on the console"; exit 1; }
got=$(wc -l <"$dir/dump.b64")
[ "$got" = "$lines" ] || { echo "the dump: $got of $lines lines came through"; exit 1; }
base64 -d "$dir/dump.b64" >"$dir/dump.tgz" 2>/dev/null &&
	[ "$(md5sum <"$dir/dump.tgz" | cut -d' ' -f1)" = "$md5" ] ||
	{ echo "the dump is garbled (MD5)"; exit 1; }
tar -C "$dir/dump" -xzf "$dir/dump.tgz" 2>/dev/null || { echo "the dump does not unpack"; exit 1; }
