#!/bin/bash
# Imitates an intruder's clean-up script: turns off and clears shell history, wipes log files it created
# under /var/log, backdates its dropped file, and deletes itself.
unset HISTFILE
export HISTSIZE=0
history -c
echo 'corpus intrusion' > /var/log/corpus-auth.log
echo 'corpus intrusion' > /var/log/corpus-app.log
: > /root/.bash_history
rm -f /var/log/corpus-auth.log /var/log/corpus-app.log
mkdir -p /usr/local/bin
echo '#!/bin/sh' > /usr/local/bin/.corpus-helper
touch -r /bin/ls /usr/local/bin/.corpus-helper
rm -f -- "$0"
