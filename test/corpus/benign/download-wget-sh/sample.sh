#!/bin/bash
# Benign control: fetches a web page and a data file with wget and reads them.
cd /tmp || exit 1
wget -q -O index.html http://www.docs-site.test/
wget -q -O data.json http://www.docs-site.test/api/data.json
grep -c '<' index.html
python3 -m json.tool data.json
