#!/usr/bin/env python3
"""Benign control: a polite worker that waits a little between three batches of work (short sleeps are
ordinary; only long or shortened ones are evasive)."""
import hashlib
import time

digest = hashlib.sha256()
for batch in range(3):
    for n in range(20000):
        digest.update(f'{batch}-{n}'.encode())
    with open('/tmp/worker-progress.txt', 'a') as out:
        out.write(f'batch {batch} done\n')
    time.sleep(1)
print(digest.hexdigest())
