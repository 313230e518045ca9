#!/bin/bash
# Imitates script ransomware on files it creates itself: thirty files are "encrypted" with openssl into
# <name>.enc copies and the originals removed, then a ransom note is left in each folder.
base=/root/corpus-share
mkdir -p "$base/photos" "$base/docs"
for i in $(seq 1 15); do
  echo "holiday photo $i" > "$base/photos/img_$i.jpg"
  echo "contract $i" > "$base/docs/contract_$i.pdf"
done
for f in "$base"/photos/* "$base"/docs/*; do
  openssl enc -aes-256-cbc -pbkdf2 -salt -k corpus-not-a-secret -in "$f" -out "$f.enc" && rm -f "$f"
done
for d in "$base/photos" "$base/docs"; do
  printf 'Your files are encrypted.\nPay 0.05 BTC (bitcoin) for the decryption key: contact restore@ransom.test\n' > "$d/RESTORE_FILES.txt"
done
