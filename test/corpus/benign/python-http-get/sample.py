#!/usr/bin/env python3
"""Benign control: fetches a web page, extracts its title and stores a small JSON summary."""
import json
import re
import urllib.request

with urllib.request.urlopen('http://www.news-site.test/index.html', timeout=10) as response:
    page = response.read().decode('utf-8', 'replace')
title = re.search(r'<title>(.*?)</title>', page)
with open('/tmp/page-summary.json', 'w') as out:
    json.dump({'title': title.group(1) if title else None, 'length': len(page)}, out)
print('saved summary')
