#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# /usr/bin/timeout for the kselftest runner: busybox's has no --foreground.
[ "$1" = --foreground ] && shift
exec /bin/busybox timeout "$@"
