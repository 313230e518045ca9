#!/usr/bin/env python3
"""Imitates a worm's SSH scanner: tries port 22 on thirty hosts of a documentation network (answered by
the fake internet) and notes which accept, as a brute-forcer would before guessing passwords."""
import socket

open_hosts = []
for last in range(1, 31):
    host = f'198.51.100.{last}'
    try:
        with socket.create_connection((host, 22), timeout=0.5) as s:
            s.sendall(b'SSH-2.0-OpenSSH_7.4\r\n')
            open_hosts.append(host)
    except OSError:
        pass
with open('/tmp/.scan-results', 'w') as out:
    out.write('\n'.join(open_hosts))
