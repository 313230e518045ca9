import { describe } from 'node:test';
import { EventLog, O, signatureCases } from '../helpers/signatures.js';

describe('persistence signatures', () => {
  signatureCases([
    {
      signature: 'persistence_cron',
      title: 'a job written to /etc/cron.d',
      scenario: () => ({ events: new EventLog().exec(200, '/tmp/sample.bin', ['./sample.bin']).write(200, '/etc/cron.d/sysupdate') }),
    },
    {
      signature: 'persistence_cron',
      title: 'a line appended to root\'s spool table',
      scenario: () => ({ events: new EventLog().append(200, '/var/spool/cron/crontabs/root') }),
    },
    {
      signature: 'persistence_cron',
      title: 'only reading /etc/crontab',
      matches: false,
      scenario: () => ({ events: new EventLog().read(200, '/etc/crontab') }),
    },
    {
      signature: 'persistence_crontab_command',
      title: 'crontab installing a file',
      scenario: () => ({ events: new EventLog().exec(201, '/usr/bin/crontab', ['crontab', '/tmp/.c']) }),
    },
    {
      signature: 'persistence_crontab_command',
      title: 'a job piped into crontab -',
      scenario: () => ({
        events: new EventLog().exec(201, '/bin/sh', ['sh', '-c', '(crontab -l; echo "* * * * * /tmp/.x") | crontab -']),
      }),
    },
    {
      signature: 'persistence_crontab_command',
      title: 'crontab -l only lists',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(201, '/usr/bin/crontab', ['crontab', '-l']) }),
    },
    {
      signature: 'persistence_systemd',
      title: 'a service unit written to /etc/systemd/system',
      scenario: () => ({ events: new EventLog().write(202, '/etc/systemd/system/dbus-update.service') }),
    },
    {
      signature: 'persistence_systemd',
      title: 'systemctl enable and the .wants symlink it makes',
      scenario: () => ({
        events: new EventLog()
          .exec(202, '/bin/systemctl', ['systemctl', 'enable', 'dbus-update'])
          .add(202, { kind: 'file.link', from: '/etc/systemd/system/dbus-update.service', to: '/etc/systemd/system/multi-user.target.wants/dbus-update.service', symbolic: true, ret: 0 }),
      }),
    },
    {
      signature: 'persistence_systemd',
      title: 'systemctl status',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(202, '/bin/systemctl', ['systemctl', 'status', 'ssh']) }),
    },
    {
      signature: 'persistence_rc_scripts',
      title: 'a command appended to /etc/rc.local',
      scenario: () => ({ events: new EventLog().append(203, '/etc/rc.local') }),
    },
    {
      signature: 'persistence_rc_scripts',
      title: 'an init script installed with update-rc.d',
      scenario: () => ({
        events: new EventLog().write(203, '/etc/init.d/netupd').exec(204, '/usr/sbin/update-rc.d', ['update-rc.d', 'netupd', 'defaults']),
      }),
    },
    {
      signature: 'persistence_shell_profile',
      title: 'a line appended to root\'s .bashrc',
      scenario: () => ({ events: new EventLog().append(205, '/root/.bashrc') }),
    },
    {
      signature: 'persistence_shell_profile',
      title: 'a script dropped in /etc/profile.d',
      scenario: () => ({ events: new EventLog().write(205, '/etc/profile.d/locale-fix.sh') }),
    },
    {
      signature: 'persistence_shell_profile',
      title: 'a shell reading .bashrc at start-up',
      matches: false,
      scenario: () => ({ events: new EventLog().exec(205, '/bin/bash', ['bash', '-i']).read(205, '/root/.bashrc').read(205, '/etc/profile') }),
    },
    {
      signature: 'persistence_ssh_authorized_keys',
      title: 'a key appended to authorized_keys',
      scenario: () => ({
        events: new EventLog()
          .add(206, { kind: 'file.mkdir', path: '/root/.ssh', mode: 0o700, ret: 0 })
          .append(206, '/root/.ssh/authorized_keys'),
      }),
    },
    {
      signature: 'persistence_ssh_authorized_keys',
      title: 'sshd_config rewritten to allow root logins',
      scenario: () => ({ events: new EventLog().open(206, '/etc/ssh/sshd_config', O.RDWR).add(206, { kind: 'file.write', path: '/etc/ssh/sshd_config', bytes: 3000 }) }),
    },
    {
      signature: 'persistence_xdg_autostart',
      title: 'a .desktop file in ~/.config/autostart',
      scenario: () => ({ events: new EventLog().write(207, '/home/user/.config/autostart/gnome-updater.desktop') }),
    },
    {
      signature: 'rootkit_ld_preload',
      title: 'a library written into /etc/ld.so.preload',
      scenario: () => ({ events: new EventLog().write(208, '/lib/libsystemd-shared.so').append(208, '/etc/ld.so.preload') }),
    },
    {
      signature: 'rootkit_ld_preload',
      title: 'the dynamic linker reading /etc/ld.so.preload',
      matches: false,
      scenario: () => ({ events: new EventLog().read(208, '/etc/ld.so.preload') }),
    },
  ]);
});
