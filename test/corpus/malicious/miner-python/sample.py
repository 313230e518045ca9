#!/usr/bin/env python3
"""Imitates a Python cryptominer's pool session: resolves a mining pool name of the fake internet and
speaks stratum JSON-RPC to it (subscribe, authorize, a few submits). No hashing is done."""
import json
import socket
import time

sock = socket.create_connection(('xmr.pool.miner.test', 3333), timeout=3)

def call(ident, method, params):
    sock.sendall((json.dumps({'id': ident, 'method': method, 'params': params}) + '\n').encode())

call(1, 'mining.subscribe', ['pyminer/0.3'])
call(2, 'mining.authorize', ['4CorpusWalletAddressPython.rig1', 'x'])
try:
    sock.recv(1024)
except OSError:
    pass
for share in range(3):
    call(10 + share, 'mining.submit', ['rig1', f'job{share}', '00000000', '5f5e1000', 'deadbeef'])
    time.sleep(0.3)
sock.close()
