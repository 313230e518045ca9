/**
 * The MITRE ATT&CK techniques nestbox's signatures refer to, in the `ttp` shape of Cuckoo 2.0.7 reports:
 * id -> {short: technique name, long: what it means}. The descriptions are nestbox's own summaries.
 */
export interface Technique {
  short: string;
  long: string;
}

const TECHNIQUES: Record<string, Technique> = {
  T1003_007: t('OS Credential Dumping: Proc Filesystem', 'Reads the memory of other processes through /proc/<pid>/mem to find credentials.'),
  T1003_008: t('OS Credential Dumping: /etc/passwd and /etc/shadow', 'Reads the local account databases to crack their password hashes offline.'),
  T1005: t('Data from Local System', 'Collects valuable files, such as cryptocurrency wallets, from the local file system.'),
  T1014: t('Rootkit', 'Hides its presence by changing how the operating system reports processes, files or connections.'),
  T1016: t('System Network Configuration Discovery', 'Looks up interfaces, addresses and routes of the machine.'),
  T1027_002: t('Obfuscated Files or Information: Software Packing', 'Compresses or encrypts its code so that it is unpacked only at run time.'),
  T1027_011: t('Obfuscated Files or Information: Fileless Storage', 'Keeps its payload in memory-backed storage instead of ordinary files.'),
  T1033: t('System Owner/User Discovery', 'Finds out which user runs it and which users exist.'),
  T1036_004: t('Masquerading: Masquerade Task or Service', 'Names its process like a system task or service so that it does not stand out.'),
  T1036_005: t('Masquerading: Match Legitimate Name or Location', 'Uses the name of a legitimate program or kernel thread to look harmless.'),
  T1037_004: t('Boot or Logon Initialization Scripts: RC Scripts', 'Adds commands to rc.local or init scripts so that they run at every boot.'),
  T1046: t('Network Service Discovery', 'Probes many hosts or ports to find services to attack.'),
  T1053_003: t('Scheduled Task/Job: Cron', 'Installs a cron job to run its code periodically or at boot.'),
  T1055: t('Process Injection', 'Runs its code inside another process, to hide there or to borrow its privileges.'),
  T1055_002: t('Process Injection: Portable Executable Injection', 'Writes code into another process and starts a thread there, e.g. with VirtualAllocEx, WriteProcessMemory and CreateRemoteThread.'),
  T1055_004: t('Process Injection: Asynchronous Procedure Call', 'Queues an asynchronous procedure call to a thread of another process so that it runs the injected code.'),
  T1055_008: t('Process Injection: Ptrace System Calls', 'Attaches to another process with ptrace to change its memory or registers.'),
  T1055_012: t('Process Injection: Process Hollowing', 'Starts a process suspended, replaces its image with its own code and lets it resume.'),
  T1056_001: t('Input Capture: Keylogging', 'Records the keys the user types, to capture passwords and messages.'),
  T1057: t('Process Discovery', 'Lists the running processes.'),
  T1059_004: t('Command and Scripting Interpreter: Unix Shell', 'Runs commands through a Unix shell.'),
  T1070_002: t('Indicator Removal: Clear Linux or Mac System Logs', 'Deletes or empties system logs to hide its activity.'),
  T1070_003: t('Indicator Removal: Clear Command History', 'Deletes shell history or stops it from being recorded.'),
  T1070_004: t('Indicator Removal: File Deletion', 'Deletes files it used, such as its own executable.'),
  T1070_006: t('Indicator Removal: Timestomp', 'Changes file times so that its files blend in with older ones.'),
  T1071: t('Application Layer Protocol', 'Talks to its controller over a common application protocol.'),
  T1071_001: t('Application Layer Protocol: Web Protocols', 'Talks to its controller over HTTP or HTTPS.'),
  T1071_003: t('Application Layer Protocol: Mail Protocols', 'Uses mail protocols such as SMTP, for spam or exfiltration.'),
  T1071_004: t('Application Layer Protocol: DNS', 'Carries commands or data inside DNS queries and answers.'),
  T1082: t('System Information Discovery', 'Collects the operating system, kernel and hardware details.'),
  T1090_003: t('Proxy: Multi-hop Proxy', 'Routes its traffic through a chain of proxies such as Tor.'),
  T1098_004: t('Account Manipulation: SSH Authorized Keys', 'Adds its key to authorized_keys to keep remote access.'),
  T1095: t('Non-Application Layer Protocol', 'Talks to its controller in a protocol of its own over raw TCP or UDP instead of a standard application protocol.'),
  T1105: t('Ingress Tool Transfer', 'Downloads more tools or payloads onto the machine.'),
  T1106: t('Native API', 'Starts programs or does its work through the operating system\'s own API rather than through a shell.'),
  T1136_001: t('Create Account: Local Account', 'Creates or changes a local account to keep access.'),
  T1222_002: t('File and Directory Permissions Modification: Linux and Mac', 'Changes file attributes or permissions, e.g. to protect its files from deletion.'),
  T1486: t('Data Encrypted for Impact', 'Encrypts the victim\'s files and asks for a ransom.'),
  T1490: t('Inhibit System Recovery', 'Deletes shadow copies, backups and boot recovery options so that encrypted or destroyed data cannot be restored.'),
  T1496: t('Resource Hijacking', 'Uses the machine\'s resources, typically to mine cryptocurrency.'),
  T1497_001: t('Virtualization/Sandbox Evasion: System Checks', 'Checks whether it runs in a virtual machine, container or sandbox.'),
  T1497_003: t('Virtualization/Sandbox Evasion: Time Based Evasion', 'Waits long before acting, so that a sandbox that watches it for a short time sees nothing.'),
  T1543_002: t('Create or Modify System Process: Systemd Service', 'Installs a systemd unit to start its code as a service.'),
  T1543_003: t('Create or Modify System Process: Windows Service', 'Installs a Windows service to start its code with the system.'),
  T1546_004: t('Event Triggered Execution: Unix Shell Configuration Modification', 'Adds commands to shell start-up files so that they run at every login.'),
  T1547_001: t('Boot or Logon Autostart Execution: Registry Run Keys / Startup Folder', 'Adds a Run key value or a Startup folder entry so that Windows starts it at every logon.'),
  T1547_006: t('Boot or Logon Autostart Execution: Kernel Modules and Extensions', 'Loads a kernel module, which runs with full privileges.'),
  T1547_013: t('Boot or Logon Autostart Execution: XDG Autostart Entries', 'Adds a desktop autostart entry that runs at every graphical login.'),
  T1548_001: t('Abuse Elevation Control Mechanism: Setuid and Setgid', 'Uses or sets the setuid/setgid bits to run with higher privileges.'),
  T1548_003: t('Abuse Elevation Control Mechanism: Sudo and Sudo Caching', 'Changes sudo\'s configuration to gain root without a password.'),
  T1552_001: t('Unsecured Credentials: Credentials In Files', 'Reads files in which programs store passwords or access tokens.'),
  T1552_004: t('Unsecured Credentials: Private Keys', 'Reads private keys, such as SSH keys, to reuse them elsewhere.'),
  T1554: t('Compromise Host Software Binary', 'Replaces or changes system programs so that they run its code.'),
  T1555_003: t('Credentials from Password Stores: Credentials from Web Browsers', 'Reads the passwords and cookies browsers store.'),
  T1562_001: t('Impair Defenses: Disable or Modify Tools', 'Stops or weakens security tools and protections.'),
  T1562_004: t('Impair Defenses: Disable or Modify System Firewall', 'Changes firewall rules to let its traffic through or lock others out.'),
  T1564: t('Hide Artifacts', 'Hides what it runs or stores from the user, for example by detaching from the terminal and session that started it.'),
  T1564_001: t('Hide Artifacts: Hidden Files and Directories', 'Gives its files dot-names or odd names so that listings do not show them.'),
  T1568_002: t('Dynamic Resolution: Domain Generation Algorithms', 'Computes many random-looking domain names to find its controller.'),
  T1573_001: t('Encrypted Channel: Symmetric Cryptography', 'Encrypts its traffic or data with a symmetric cipher such as AES, RC4 or ChaCha20.'),
  T1574_006: t('Hijack Execution Flow: Dynamic Linker Hijacking', 'Makes the dynamic linker load its library into every program.'),
  T1620: t('Reflective Code Loading', 'Runs code from memory without writing it to an ordinary file.'),
  T1622: t('Debugger Evasion', 'Detects whether it is being debugged or traced.'),
};

function t(short: string, long: string): Technique {
  return { short, long };
}

/** The technique for an id such as "T1053.003", or undefined when nestbox does not know it. */
export function techniqueOf(id: string): Technique | undefined {
  return TECHNIQUES[id.replace('.', '_')];
}

/** The `ttp` object of a signature entry; unknown ids map to null, as in Cuckoo. */
export function techniquesOf(ids: readonly string[]): Record<string, Technique | null> {
  return Object.fromEntries(ids.map((id) => [id, techniqueOf(id) ?? null]));
}
