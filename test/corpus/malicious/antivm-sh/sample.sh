#!/bin/bash
# Imitates a bot's virtual-machine checks before it installs: DMI strings, the CPU's hypervisor flag,
# systemd-detect-virt. It then installs itself for the next boot whatever the answer.
vm=no
for f in /sys/class/dmi/id/product_name /sys/class/dmi/id/sys_vendor; do
  grep -qiE 'vmware|virtualbox|qemu|kvm' "$f" 2>/dev/null && vm=yes
done
grep -qi hypervisor /proc/cpuinfo && vm=yes
systemd-detect-virt -q 2>/dev/null && vm=yes
echo "vm=$vm"
echo '@reboot root /usr/local/bin/corpus-vmcheck' > /etc/cron.d/corpus-vmcheck
