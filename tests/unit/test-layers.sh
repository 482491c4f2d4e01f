#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The layers of daemon/ (docs/design.md): a policy that has moved onto the
# core's interface (daemon/core.h) must not fall back to the manager. Each
# file listed here may not include manager.h, name a manager_*() function,
# or declare a struct manager. A file joins the list when it moves; the
# list grows until it holds every policy and the bus (issue 31).
set -u
: "${FIXTURE_DIR:?}"
top=$(cd "$FIXTURE_DIR/../.." && pwd)
on_core="daemon/timers.c daemon/timers.h daemon/sessions.c daemon/sessions.h"
rc=0 n=0
for f in $on_core; do
	[ -f "$top/$f" ] || { echo "not ok - $f is listed but missing"; rc=1; continue; }
	n=$((n + 1))
	# Comments may name the manager; code may not. Their newlines stay, so line numbers do.
	code=$(sed -e 's|//.*||' "$top/$f" | perl -0pe 's{/\*(.*?)\*/}{"\n" x ($1 =~ tr/\n//)}gse')
	hits=$(grep -nE '#include "manager\.h"|\bmanager_[a-z_]+ *\(|struct manager\b' <<< "$code")
	if [ -n "$hits" ]; then
		echo "not ok - $f reaches past core.h into the manager:"
		sed 's/^/#   /' <<< "$hits"
		rc=1
	else
		echo "ok - $f talks to the core only through core.h"
	fi
done
echo "# $n files on the core's interface"
exit $rc
