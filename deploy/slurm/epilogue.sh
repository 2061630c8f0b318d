#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/denpex.sh), run as root
# on every node of a job when it ends: diagnose this node's logs of the job
# and drop the metrics where node_exporter's textfile collector reads them.
# docs/monitoring.md. An epilog's exit status decides whether the node is
# drained, so this script always exits 0: draining is the alert's decision.
set -u
TEXTFILE_DIR=${DENPEX_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}
JOB_LOGS=${DENPEX_JOB_LOGS:-/shared/logs/$SLURM_JOB_ID}
LOGS=""
[ -d "$JOB_LOGS" ] && LOGS="$JOB_LOGS"
# The kernel's ring buffer of the last hour (Xids, OOM kills, link flaps).
KERNEL=$(mktemp)
journalctl -k --since "-1h" -o short-iso > "$KERNEL" 2>/dev/null || dmesg -T > "$KERNEL" 2>/dev/null
denpex diagnose -q --node "$(hostname -s)" \
  --output prometheus="$TEXTFILE_DIR/denpex.prom" \
  --output jsonl="/var/tmp/denpex-$SLURM_JOB_ID.jsonl" \
  "$KERNEL" $LOGS
rm -f "$KERNEL"
exit 0
