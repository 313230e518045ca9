#!/bin/bash
# Benign control: downloads a plain text file and a JSON document with curl and checks them.
mkdir -p /tmp/downloads
curl -fsS -o /tmp/downloads/release-notes.txt http://files.example-mirror.test/release-notes.txt
curl -fsS -o /tmp/downloads/latest.json http://files.example-mirror.test/latest.json
sha256sum /tmp/downloads/*
