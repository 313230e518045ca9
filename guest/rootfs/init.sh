#!/bin/sh
# Second stage of the nestbox guest, run once by busybox init before the agent starts. The host saves
# the machine's memory right after the agent answers, so everything here runs once per image, not per task.
# The host passes the agent interface's MAC address and address on the kernel command line.

arg() {
  for word in $(cat /proc/cmdline); do
    case $word in "$1="*) echo "${word#*=}" ;; esac
  done
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ln -sf /proc/self/fd /dev/fd

hostname -F /etc/hostname
ip link set lo up

agent_mac=$(arg nestbox.agent_mac)
agent_address=$(arg nestbox.agent_address)
for path in /sys/class/net/*; do
  if [ "$(cat "$path/address")" = "$agent_mac" ]; then
    ip link set "${path##*/}" up
    ip addr add "$agent_address" dev "${path##*/}"
  fi
done

# The behaviour tracer loads nestbox's monitor now, before the agent answers and the host saves the
# memory, so that every task finds it attached. Without it (a monitor that did not load) the analyzer
# falls back to strace where the image has it.
# A boot with nestbox.tracer=off on its kernel command line skips it.
if [ "$(arg nestbox.tracer)" != off ] && [ -x /usr/lib/nestbox/monitor ]; then
  mkdir -p /run/nestbox
  /usr/bin/python3 -B /usr/lib/nestbox/tracer.py </dev/null >/dev/console 2>&1 &
  # Bounded, so that the host's boot timeout is kept: a tracer not armed by then is ended (a task
  # must not find it still compiling) and the analyzer uses strace.
  deadline=$(($(cut -d. -f1 /proc/uptime) + 180))
  while [ ! -s /run/nestbox/tracer.state ] && [ "$(cut -d. -f1 /proc/uptime)" -lt $deadline ]; do sleep 1; done
  if [ ! -s /run/nestbox/tracer.state ]; then
    kill -KILL -- "-$(cat /run/nestbox/tracer.pid)" 2>/dev/null
    echo "failed not attached within 180 s of boot" >/run/nestbox/tracer.state
  fi
  echo "nestbox guest: tracer $(cat /run/nestbox/tracer.state) at $(cut -d' ' -f1 /proc/uptime) s" >/dev/console
fi

# The console the screenshots show.
printf '\033[2J\033[H%s\n\n' "$(cat /etc/issue.net) - $(hostname)" >/dev/tty1
echo "nestbox guest: system ready" >/dev/console
