#!/bin/bash
# The summary's findings totals count every occurrence at every level, also
# the repeats that were counted and not logged: three UDP sockets each set
# SO_SNDBUF to 100 MiB (capped by net.core.wmem_max, then doubled), at trace,
# info and warn: option_adjusted is 3 at each, as setsockopt.SO_SNDBUF.differs.
. "$(dirname "$0")/../lib.sh"

cat >"$T/bufs.py" <<'PY'
import socket
for i in range(3):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 100 << 20)
    u.close()
PY
wmem=$(cat /proc/sys/net/core/wmem_max)
if [ "$wmem" -ge $((100 << 20)) ]; then ok "findings totals # SKIP net.core.wmem_max $wmem caps nothing"; finish; fi
for lvl in trace info warn; do
	SOCKAUDIT_LEVEL=$lvl SOCKAUDIT_LOG=$T/$lvl.jsonl LD_PRELOAD="$(preload_value)" python3 "$T/bufs.py"
	got=$(jq -s -c '[.[] | select(.event=="summary") | {findings, differs: .setsockopt.SO_SNDBUF.differs}]' "$T/$lvl.jsonl" 2>/dev/null)
	check_jq "$lvl: findings.option_adjusted 3 = setsockopt.SO_SNDBUF.differs (got $got)" "$T/$lvl.jsonl" \
		'[.[] | select(.event=="summary")] | length == 1 and .[0].findings.option_adjusted == 3 and .[0].setsockopt.SO_SNDBUF.differs == 3'
done
finish
