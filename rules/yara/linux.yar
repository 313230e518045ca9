/* Traits of Linux malware seen in scripts, binaries and memory. */

rule shell_reverse_connection
{
    meta:
        description = "Starts a shell wired to a network connection"
        author = "nestbox"
        severity = "4"
    strings:
        $devtcp = /\/dev\/(tcp|udp)\/[0-9a-zA-Z.\-]+\/[0-9]+/
        $nc = /\bnc(at)?\s+(-[a-z]*e\s+\/bin\/(ba)?sh|.*-c\s+\/bin\/(ba)?sh)/
        $socat = /socat\s+[^\n]*exec:['"]?\/bin\/(ba)?sh/ nocase
        $mkfifo = /mkfifo\s+\S+[^\n]*\/bin\/(ba)?sh[^\n]*\bnc\b/
    condition:
        any of them
}

rule crypto_miner
{
    meta:
        description = "Cryptocurrency miner configuration or protocol strings"
        author = "nestbox"
        severity = "3"
    strings:
        $stratum = "stratum+tcp://" nocase
        $stratum_ssl = "stratum+ssl://" nocase
        $xmrig = "xmrig" nocase
        $donate = "donate-level" nocase
        $algo = "\"algo\"" nocase
    condition:
        any of ($stratum*) or ($xmrig and ($donate or $algo))
}

rule linux_persistence_paths
{
    meta:
        description = "Refers to places Linux malware uses to start again after a reboot"
        author = "nestbox"
        severity = "2"
    strings:
        $cron1 = "/etc/crontab"
        $cron2 = "/var/spool/cron"
        $cron3 = "/etc/cron.d/"
        $rc = "/etc/rc.local"
        $initd = "/etc/init.d/"
        $systemd = "/etc/systemd/system/"
        $bashrc = "/.bashrc"
        $profile = "/etc/profile.d/"
        $preload = "/etc/ld.so.preload"
        $keys = "/.ssh/authorized_keys"
    condition:
        2 of them
}

rule mirai_like_scanner
{
    meta:
        description = "Default credentials and busybox checks of Mirai-like IoT bots"
        author = "nestbox"
        severity = "4"
    strings:
        $busybox = "/bin/busybox" ascii
        $watchdog = "/dev/watchdog" ascii
        $cred1 = "xc3511" ascii
        $cred2 = "vizxv" ascii
        $cred3 = "7ujMko0admin" ascii
        $enable = "enable" ascii
        $shell = "shell" ascii
        $sh = "sh" ascii
    condition:
        uint32(0) == 0x464c457f and $busybox and $watchdog and 1 of ($cred*) and $enable and $shell and $sh
}
