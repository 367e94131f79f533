# SPDX-License-Identifier: GPL-2.0
#
# Turn one platform's console.log into KTAP (stdout) and a tab-separated
# result table (file "rows").  Inputs: -v platform=NAME -v list=TESTS_LIST
# -v rows=FILE [-v xfails=FILE].  Lines for us carry "@@ "; everything else
# is the guest kernel's console (on the host platform: the host kernel's
# log since the run began), scanned for splats.  "@@ KERNEL-LOG unreadable:
# WHY" (scripts/host.sh) makes that check a SKIP, unless a splat showed.
#
# xfails (scripts/expected-failures) lists KTAP points that fail on a
# platform because of a proven platform defect: "platform<TAB>test<TAB>ERE
# on the point's description<TAB>evidence[<TAB>intermittent]".  A test
# whose every failing point is listed for this platform is an expected
# failure (xfail); a listed point that passes fails the test (XPASS: the
# defect is gone, or the check lost its power), unless it is intermittent.
# Under the kselftest runner (kselftest-run.sh) a test's points come nested
# ("# not ok ..."), after "# selftests: kvm: NAME": they count as kvm/NAME's,
# and the runner's "not ok ... selftests: kvm: NAME" is expected when
# every nested failure before it was.

# the xfails entry a failing point of test t matches on this platform, or 0;
# an entry for a test covers its runs as another user ("kvm/T @nonroot")
function expected(t, desc,    k, base) {
	base = t
	sub(/ @nonroot$/, "", base)
	for (k = 1; k <= nx; k++)
		if ((xtest[k] == t || xtest[k] == base) && desc ~ xre[k])
			return k
	return 0
}

function finish(name, result, note) {
	n++
	names[n] = name
	results[n] = result
	notes[n] = note
}

BEGIN {
	# a list line is "test [arguments]"
	# "@..." words are part of the name (suite.sh prints them)
	while ((getline t < list) > 0) {
		nw = split(t, words, " ")
		name = words[1]
		for (w = 2; w <= nw; w++)
			if (words[w] ~ /^@/)
				name = name " " words[w]
		want[++nwant] = name
	}
	while (xfails != "" && (getline x < xfails) > 0) {
		if (x ~ /^#/ || x == "")
			continue
		split(x, xf, "\t")
		if (xf[1] != platform)
			continue
		nx++
		xtest[nx] = xf[2]; xre[nx] = xf[3]; xwhy[nx] = xf[4]
		xflaky[nx] = xf[5] == "intermittent"
	}
	splat = "Kernel panic|Oops|BUG:|WARNING:|kernel BUG at|general protection fault|" \
		"possible circular locking|inconsistent lock state|possible recursive locking|" \
		"suspicious RCU usage|INFO: task .* blocked|rcu: INFO|detected stall|" \
		"UBSAN:|KASAN:|Call Trace:"
}

# serial consoles end lines with CR LF
{ sub(/\r$/, "") }

# the coverage kernel's gcov counts (guest-init.sh's dump_gcov): base64,
# which may spell "Oops" by chance
/kvmgcov: [A-Za-z0-9+\/=]+$/ { next }

!/@@ / {
	if ($0 ~ splat && nsplat < 20)
		splats[++nsplat] = $0
	next
}

{
	line = $0
	sub(/^.*@@ /, "", line)
}

# suite.sh ends each test's output with a newline of its own, so that RC
# starts a line even after a test's last line without one: the empty line
# this adds otherwise is nobody's output
line == "" { next }

line ~ /^CAPS / { caps = substr(line, 6); next }
line ~ /^KERNEL-LOG unreadable: / { klog_unread = substr(line, 24); next }
line ~ /^TIMEOUT/ { timeout = line; next }
line == "END" { ended = 1; next }
line == "STOPPED" { stopped = 1; next }

line ~ /^TEST / {
	cur = substr(line, 6)
	out[cur] = ""
	next
}

line ~ /^RC / && cur != "" {
	split(line, f, " ")
	rc[cur] = f[2]
	secs[cur] = f[4] - f[3]
	cur = ""
	next
}

# A test's own KTAP points: what the platform proved, and what it could not
# (SKIP).  Not for runs under the wrong rule, whose path points must fail.
cur != "" && cur !~ /@wrong-rule/ {
	desc = line
	sub(/^(not )?ok [0-9]+ /, "", desc)
	if (line ~ /^# selftests: [^ ]+: [^ ]+$/) {
		sub_test = line
		sub(/^# selftests: /, "", sub_test)
		sub(/: /, "/", sub_test)
		sub_bad = sub_xfail = 0
	} else if (line ~ /^# (not )?ok [0-9]+ / && sub_test != "") {
		sub(/^# /, "", desc)
		sub(/^(not )?ok [0-9]+ /, "", desc)
		k = expected(sub_test, desc)
		if (line ~ /^# not ok/ && k) {
			sub_xfail++
			xnote[cur] = xwhy[k]
		} else if (line ~ /^# not ok/)
			sub_bad++
		else if (k && !xflaky[k] && line !~ /# SKIP/)
			xpass[cur] = xpass[cur] "; " desc " (" xwhy[k] ")"
	}
	if (line ~ /^ok [0-9]+ .*# SKIP/)
		pskip[cur]++
	else if (line ~ /^ok [0-9]+ .*# XFAIL/)
		pknown[cur]++	# exactly a known KVM deviation from the SDM
	else if (line ~ /^ok [0-9]+ /) {
		pok[cur]++
		if ((k = expected(cur, desc)) && !xflaky[k])
			xpass[cur] = xpass[cur] "; " desc " (" xwhy[k] ")"
	} else if (line ~ /^not ok [0-9]+ /) {
		pfail[cur]++
		if ((k = expected(cur, desc))) {
			pxfail[cur]++
			xnote[cur] = xwhy[k]
		} else if (sub_test != "" && sub_xfail && !sub_bad)
			pxfail[cur]++
	}
	if (line ~ /^(not )?ok [0-9]+ /)
		sub_test = ""
}

cur != "" { out[cur] = out[cur] "    " line "\n"; next }

END {
	printf "TAP version 13\n1..%d\n", nwant + 2
	printf "# platform %s: %s\n", platform, caps == "" ? "no capabilities reported" : caps
	for (i = 1; i <= nwant; i++) {
		t = want[i]
		printf "%s", out[t]
		if (!(t in rc) && stopped) {
			result = "skip"; note = "SKIP not run: the suite stopped at its first failure"
		} else if (!(t in rc)) {
			result = "fail"
			note = timeout != "" ? "no result: " timeout : "no result: the guest stopped before it ended"
		} else if (rc[t] == 0) {
			result = "pass"; note = ""
		} else if (rc[t] == 4) {
			result = "skip"; note = "SKIP"
		} else if (rc[t] == 137) {
			result = "fail"; note = "killed by the per-test timeout"
		} else if (pxfail[t] && pxfail[t] == pfail[t] && rc[t] == 1) {
			result = "xfail"
			note = "expected failure: " pxfail[t] " point(s), " xnote[t]
		} else {
			result = "fail"; note = "exit status " rc[t]
		}
		if (xpass[t] != "") {
			result = "fail"
			note = "XPASS, listed as an expected failure on " platform \
			       " but passed" xpass[t] ": update scripts/expected-failures"
		}
		printf "%s %d %s%s\n", result == "fail" ? "not ok" : "ok", i, t,
		       result == "skip" ? " # " note : result == "xfail" ? " # XFAIL " note : ""
		if (result == "fail")
			printf "# %s: %s\n", t, note
		printf "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", platform, t, result,
		       (t in secs) ? secs[t] : "-", caps, pok[t], pskip[t], pfail[t],
		       pknown[t] > rows
	}

	ok = ended
	printf "%s %d suite-completed\n", ok ? "ok" : "not ok", nwant + 1
	if (!ok)
		printf "# the suite did not reach its end%s\n", timeout != "" ? " (" timeout ")" : ""
	printf "%s\t%s\t%s\t%s\t%s\n", platform, "suite-completed", ok ? "pass" : "fail", "-", caps > rows

	kernel = platform == "host" ? "host kernel" : "guest kernel"
	for (i = 1; i <= nsplat; i++)
		printf "# %s: %s\n", kernel, splats[i]
	clean = nsplat ? "fail" : klog_unread != "" ? "skip" : "pass"
	printf "%s %d guest-kernel-clean%s\n", nsplat ? "not ok" : "ok", nwant + 2,
	       clean == "skip" ? " # SKIP " klog_unread : ""
	printf "%s\t%s\t%s\t%s\t%s\n", platform, "guest-kernel-clean", clean, "-", caps > rows
}
