import { definePackage } from './define.js';

/**
 * Reboot tasks: the machine starts from the end state of an earlier task, and this package plays what a
 * boot would start: rc.local, @reboot cron entries, init scripts and systemd services enabled for boot,
 * XDG autostart entries, and a login shell (profile and bashrc).
 */
export const BOOT_SCRIPT = String.raw`
run() { sh -c "$1" >/dev/null 2>&1 & }
[ -x /etc/rc.local ] && /etc/rc.local &
for tab in /etc/crontab /etc/cron.d/*; do
  [ -f "$tab" ] && grep -E '^@reboot[[:space:]]' "$tab" | while read -r _ _user cmd; do run "$cmd"; done
done
for tab in /var/spool/cron/crontabs/*; do
  [ -f "$tab" ] && grep -E '^@reboot[[:space:]]' "$tab" | while read -r _ cmd; do run "$cmd"; done
done
for link in /etc/rc2.d/S* /etc/rc3.d/S*; do [ -x "$link" ] && "$link" start >/dev/null 2>&1 & done
for unit in /etc/systemd/system/*.wants/*.service /root/.config/systemd/user/*.wants/*.service; do
  [ -f "$unit" ] || continue
  grep -E '^ExecStart=' "$unit" | sed 's/^ExecStart=[-@+!:]*//' | while read -r cmd; do run "$cmd"; done
done
for entry in /etc/xdg/autostart/*.desktop /root/.config/autostart/*.desktop; do
  [ -f "$entry" ] || continue
  grep -E '^Exec=' "$entry" | head -n 1 | sed 's/^Exec=//; s/ %[fFuUdDnNickvm]//g' | while read -r cmd; do run "$cmd"; done
done
bash -lic true >/dev/null 2>&1 </dev/null
wait
`;

export const rebootPackage = definePackage({
  name: 'reboot',
  needsDisplay: true,
  aliases: [],
  description: 'replays what a boot would start in the state an earlier task left behind',
  command: ['/bin/sh', '-c', BOOT_SCRIPT],
});
