#!/usr/bin/env python3
"""Imitates ransomware on files it creates itself: 40 documents in /root/corpus-files are rewritten
with XOR "encryption" and renamed to <name>.locked, with a ransom note in each folder."""
import os

BASE = '/root/corpus-files'
FOLDERS = [BASE, f'{BASE}/projects']
NOTE = ('Your files have been encrypted!\nSend 0.2 bitcoin to get the decryption key.\n'
        '(corpus imitation: nothing was really encrypted)\n')

for folder in FOLDERS:
    os.makedirs(folder, exist_ok=True)
    for n in range(20):
        with open(f'{folder}/notes-{n:02}.txt', 'w') as out:
            out.write(f'meeting notes {n}\n' * 10)

for folder in FOLDERS:
    for name in sorted(os.listdir(folder)):
        path = f'{folder}/{name}'
        if not os.path.isfile(path) or not name.endswith('.txt'):
            continue
        with open(path, 'r+b') as f:
            data = bytes(b ^ 0x37 for b in f.read())
            f.seek(0)
            f.write(data)
        os.rename(path, path + '.locked')
    with open(f'{folder}/DECRYPT_YOUR_FILES.txt', 'w') as out:
        out.write(NOTE)
