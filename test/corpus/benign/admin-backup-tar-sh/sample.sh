#!/bin/bash
# Benign control: makes a project folder and backs it up with tar and gzip, then checks the archive.
project=/tmp/project
mkdir -p "$project/src" "$project/docs"
for n in $(seq 1 12); do
  echo "int f$n(void) { return $n; }" > "$project/src/f$n.c"
done
echo "# Project" > "$project/docs/README.md"
backup=/tmp/backups/project-$(date -u +%Y%m%d).tar.gz
mkdir -p /tmp/backups
tar -czf "$backup" -C /tmp project
tar -tzf "$backup" | wc -l
sha256sum "$backup" > "$backup.sha256"
