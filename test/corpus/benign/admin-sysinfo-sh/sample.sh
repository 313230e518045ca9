#!/bin/bash
# Benign control: the inventory an admin script prints: who and where am I, the kernel, the processes.
uname -a
id
hostname
ps aux | head -5
ip addr show | grep -c inet
