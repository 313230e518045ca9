#!/usr/bin/env python3
"""Imitates a bot with a domain generation algorithm: derives a dozen random-looking names from the date
and tries to reach each, as it would to find today's controller."""
import datetime
import hashlib
import socket

seed = datetime.date(2024, 1, 1).isoformat()
for n in range(12):
    digest = hashlib.md5(f'{seed}-{n}'.encode()).hexdigest()
    name = ''.join(chr(ord('a') + int(c, 16) % 26) for c in digest[:14]) + '.test'
    try:
        address = socket.gethostbyname(name)
        with socket.create_connection((address, 443), timeout=1):
            pass
    except OSError:
        pass
