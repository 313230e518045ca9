#!/bin/bash
# Benign control: rotates the log files of its own little service (keeps three compressed generations).
logs=/tmp/myservice/logs
mkdir -p "$logs"
for n in 1 2 3 4; do
  echo "$(date -u +%T) request $n served" >> "$logs/service.log"
  [ -f "$logs/service.log.3.gz" ] && rm -f "$logs/service.log.3.gz"
  for g in 2 1; do
    [ -f "$logs/service.log.$g.gz" ] && mv "$logs/service.log.$g.gz" "$logs/service.log.$((g + 1)).gz"
  done
  mv "$logs/service.log" "$logs/service.log.1" && gzip -f "$logs/service.log.1"
done
ls -l "$logs"
