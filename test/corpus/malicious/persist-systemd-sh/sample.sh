#!/bin/bash
# Imitates systemd persistence: a service unit and a user unit of its own that restart a copied binary,
# then asks systemctl to enable them (there is no running systemd in the sandbox; the attempt is what counts).
mkdir -p /usr/local/lib/corpus
cp /bin/true /usr/local/lib/corpus/netsync
mkdir -p /etc/systemd/system
cat > /etc/systemd/system/corpus-netsync.service <<'UNIT'
[Unit]
Description=Network Sync Daemon
[Service]
ExecStart=/usr/local/lib/corpus/netsync
Restart=always
[Install]
WantedBy=multi-user.target
UNIT
mkdir -p /root/.config/systemd/user
cp /etc/systemd/system/corpus-netsync.service /root/.config/systemd/user/corpus-netsync.service
systemctl enable corpus-netsync.service 2>/dev/null
systemctl --user enable corpus-netsync.service 2>/dev/null
exit 0
