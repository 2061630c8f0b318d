#!/bin/sh
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/denpex.sh), run as root
# on every node of a job when it ends: diagnose this node's logs of the job
# and drop the metrics where node_exporter's textfile collector reads them.
# docs/monitoring.md. An epilog's exit status decides whether the node is
# drained, so this script always exits 0: draining is the alert's decision.
#
# The findings (JSON Lines) go to /var/tmp, or, with DENPEX_FINDINGS_DIR set
# to a directory every node shares, to DENPEX_FINDINGS_DIR/JOBID/NODE.jsonl:
# `denpex diagnose DENPEX_FINDINGS_DIR/JOBID/` is then the diagnosis of the
# whole job (docs/cluster.md).
set -u
TEXTFILE_DIR=${DENPEX_TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}
JOB_LOGS=${DENPEX_JOB_LOGS:-/shared/logs/$SLURM_JOB_ID}
NODE=$(hostname -s)
FINDINGS=/var/tmp/denpex-$SLURM_JOB_ID.jsonl
if [ -n "${DENPEX_FINDINGS_DIR:-}" ] && mkdir -p "$DENPEX_FINDINGS_DIR/$SLURM_JOB_ID"; then
  FINDINGS=$DENPEX_FINDINGS_DIR/$SLURM_JOB_ID/$NODE.jsonl
fi
LOGS=""
[ -d "$JOB_LOGS" ] && LOGS="$JOB_LOGS"
# The kernel's ring buffer of the last hour (Xids, OOM kills, link flaps).
KERNEL=$(mktemp)
journalctl -k --since "-1h" -o short-iso > "$KERNEL" 2>/dev/null || dmesg -T > "$KERNEL" 2>/dev/null
# $LOGS is empty or one directory: unquoted so that empty is no argument.
# shellcheck disable=SC2086
denpex diagnose -q --node "$NODE" \
  --output prometheus="$TEXTFILE_DIR/denpex.prom" \
  --output jsonl="$FINDINGS" \
  "$KERNEL" $LOGS
rm -f "$KERNEL"
exit 0
