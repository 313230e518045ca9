#!/bin/bash
# Imitates a userland rootkit's install step: a library of its own under /usr/local/lib (here just text,
# not a real library) registered in /etc/ld.so.preload, so every program would load it. To stay harmless
# it removes the entry again before it exits.
mkdir -p /usr/local/lib
printf 'corpus imitation of a hiding library\n' > /usr/local/lib/libcorpushide.so
echo /usr/local/lib/libcorpushide.so > /etc/ld.so.preload
sleep 1
rm -f /etc/ld.so.preload
