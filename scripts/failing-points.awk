# SPDX-License-Identifier: GPL-2.0
#
# What made one test of a platform's KTAP (scripts/report.awk's output)
# fail: -v t=TEST prints, indented, its nested failing points with the
# diagnostics next to each (up to 4 lines before it and 6 after, at most 16
# lines in all), the kernel reports before its own point and the reason
# report.awk gave after it.  Nested KTAP under the kselftest runner comes
# prefixed "# ", once more.  Used where a failure is repeated for a reader:
# the flake count and make check's closing lines.

function keep(line) {
	if (n < 16)
		lines[++n] = line
}

# a test's nested lines come before its own top-level point
/^(not )?ok [0-9]+ / {
	if (mine)
		exit
	name = $0
	sub(/^(not )?ok [0-9]+ /, "", name)
	sub(/ # .*/, "", name)
	if (name == t) {
		for (i = 1; i <= n; i++)
			print "    " lines[i]
		mine = 1
	}
	n = 0; nb = 0; after = 0
	next
}
mine && /^# / { print "    " $0; next }
mine { exit }
/^# (guest|host) kernel: / { keep($0); next }
{
	line = $0
	sub(/^ +/, "", line)
	point = line
	sub(/^# /, "", point)
}
point ~ /^not ok / {
	for (i = 1; i <= nb; i++)
		keep(before[i])
	keep(line)
	# the runner's own verdict ends a test: what follows is the next's
	nb = 0; after = point ~ /^not ok [0-9]+ selftests: / ? 0 : 6
	next
}
point ~ /^ok / { nb = 0; after = 0; next }
line ~ /^# / && line !~ /^(# )+(Totals:|[0-9]+ skipped test|timeout set to|selftests: |TAP version|Random seed|[0-9]+\.\.[0-9]+$)/ {
	if (after > 0) {
		keep(line)
		after--
	} else {
		if (nb == 4) {
			for (i = 1; i < 4; i++)
				before[i] = before[i + 1]
			nb = 3
		}
		before[++nb] = line
	}
}
