#!/bin/bash
# Benign control: a disk-usage report an administrator might cron, written to a file of its own.
report=/tmp/disk-report.txt
{
  echo "== disk usage at $(date -u +%F)"
  df -h / /tmp
  du -sh /usr/share/doc /var/cache 2>/dev/null | sort -h
} > "$report"
wc -l "$report"
