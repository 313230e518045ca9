import { WINDOWS_USER, WINE_HOME, WINE_PREFIX } from '../../report/windows-paths.js';
import type { RelaySettings } from './wine-relay.js';

/**
 * The prepared Wine prefix: what a sample finds when it looks around a Windows desktop. Built once with
 * the Wine layer (wine-layer.ts), inside the layer's chroot, by the script below.
 */

const BOOT_PROGRAM = 'rundll32.exe';
const BOOT_ARGUMENTS = 'user32.dll,GetDesktopWindow';

/** What makes Wine boot (services) and open its desktop (explorer.exe): a program that asks for the desktop window. */
export const BOOT_COMMAND = `${BOOT_PROGRAM} ${BOOT_ARGUMENTS}`;

/**
 * The same for a task's boot (wine-run.ts), with the program's full path (quoted for the shell): Wine
 * then runs it in the process it starts. Named alone, it is looked up by a launcher process that starts
 * it only once the boot is over: a whole Wine process start (0.1-0.3 s) more before the sample can
 * start. The layer's last boot keeps BOOT_COMMAND: both boot alike, and changing it would make every
 * host build its Wine layer anew.
 */
export const TASK_BOOT_COMMAND = `'C:\\windows\\system32\\${BOOT_PROGRAM}' ${BOOT_ARGUMENTS}`;

/** The environment every Wine process of the machine runs with (the sample's adds its debug channels). */
export function wineEnvironment(): Record<string, string> {
  return {
    HOME: WINE_HOME,
    USER: WINDOWS_USER,
    LOGNAME: WINDOWS_USER,
    WINEPREFIX: WINE_PREFIX,
    // Without Mono and Gecko (not in Debian's packages) Wine would ask to download them.
    WINEDLLOVERRIDES: 'mscoree,mshtml=',
  };
}

const DRIVE_C = `${WINE_PREFIX}/drive_c`;
const PROFILE = `${DRIVE_C}/users/${WINDOWS_USER}`;

/** Programs a desktop of this kind has installed, as their uninstall entries and folders show them. */
const INSTALLED = [
  { key: '{8A69D345-D564-463C-AFF1-A69D9E530F96}', name: 'Google Chrome', publisher: 'Google LLC', version: '119.0.6045.160', folder: 'Program Files/Google/Chrome/Application', exe: 'chrome.exe' },
  { key: '{AC76BA86-7AD7-1033-7B44-AC0F074E4100}', name: 'Adobe Acrobat Reader DC', publisher: 'Adobe Systems Incorporated', version: '23.006.20360', folder: 'Program Files (x86)/Adobe/Acrobat Reader DC/Reader', exe: 'AcroRd32.exe' },
  { key: '7-Zip', name: '7-Zip 23.01 (x64)', publisher: 'Igor Pavlov', version: '23.01', folder: 'Program Files/7-Zip', exe: '7zFM.exe' },
  { key: 'Notepad++', name: 'Notepad++ (64-bit x64)', publisher: 'Notepad++ Team', version: '8.5.8', folder: 'Program Files/Notepad++', exe: 'notepad++.exe' },
  { key: '{90160000-0011-0000-1000-0000000FF1CE}', name: 'Microsoft Office Professional Plus 2016', publisher: 'Microsoft Corporation', version: '16.0.4266.1001', folder: 'Program Files/Microsoft Office/Office16', exe: 'WINWORD.EXE' },
];

/** A user's files: names and a line of text each (binary formats get plausible sizes from padding). */
const DOCUMENTS: Record<string, string> = {
  'Documents/Quarterly report Q3.docx': 'Quarterly report, third quarter: revenue and outlook.',
  'Documents/Budget 2024.xlsx': 'Budget 2024: marketing, travel, equipment.',
  'Documents/notes.txt': 'Call the bank on Monday. Dentist Thursday 10:30. Renew the car insurance.',
  'Documents/CV Anna Becker.pdf': 'Curriculum vitae, Anna Becker, project manager.',
  'Desktop/passwords old.txt': 'wifi: see router sticker',
  'Desktop/Invoice 4471.pdf': 'Invoice 4471, due in 30 days.',
  'Pictures/holiday 2023 001.jpg': 'JFIF holiday picture',
  'Downloads/setup_readme.txt': 'Thank you for downloading.',
};

function escapeRegString(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

function windowsPath(relativeToC: string): string {
  return `C:\\${relativeToC.replace(/\//g, '\\')}`;
}

/** The registry changes, in regedit's format (imported with `reg import`). */
export function prefixRegistry(relay: RelaySettings): string {
  const uninstall = 'HKEY_LOCAL_MACHINE\\Software\\Microsoft\\Windows\\CurrentVersion\\Uninstall';
  const lines = [
    'Windows Registry Editor Version 5.00',
    '',
    '[HKEY_CURRENT_USER\\Software\\Wine\\Debug]',
    `"RelayInclude"="${escapeRegString(relay.include.join(';'))}"`,
    `"RelayFromExclude"="${escapeRegString(relay.fromExclude.join(';'))}"`,
    '"RelayExclude"=-',
    '',
    '[HKEY_LOCAL_MACHINE\\Software\\Microsoft\\Windows NT\\CurrentVersion]',
    `"RegisteredOwner"="${WINDOWS_USER}"`,
    '"RegisteredOrganization"=""',
    '"ProductName"="Windows 10 Pro"',
    '',
    '[HKEY_CURRENT_USER\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\RecentDocs]',
    '"MRUListEx"=hex:00,00,00,00,ff,ff,ff,ff',
    '',
  ];
  for (const program of INSTALLED) {
    lines.push(
      `[${uninstall}\\${program.key}]`,
      `"DisplayName"="${escapeRegString(program.name)}"`,
      `"Publisher"="${escapeRegString(program.publisher)}"`,
      `"DisplayVersion"="${program.version}"`,
      `"InstallLocation"="${escapeRegString(windowsPath(program.folder))}"`,
      `"DisplayIcon"="${escapeRegString(`${windowsPath(program.folder)}\\${program.exe}`)}"`,
      '',
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The shell script (run in the layer's chroot, as the machine's root) that makes the prefix: Wine's first
 * boot, the registry above, the user's files, program folders, and no Z: drive (which would show the
 * whole Unix tree to the sample). `$REGFILE` is the registry file, readable through Z: until Z: goes.
 */
export function prefixScript(): string {
  const files = Object.entries(DOCUMENTS).map(
    ([path, text]) => `mkdir -p "$(dirname "${PROFILE}/${path}")" && printf '%s\\n' '${text.replace(/'/g, '')}' > "${PROFILE}/${path}" && head -c 20000 /dev/urandom >> "${PROFILE}/${path}"`,
  );
  const programs = INSTALLED.map(({ folder, exe }) => `mkdir -p "${DRIVE_C}/${folder}" && head -c 4096 /dev/urandom > "${DRIVE_C}/${folder}/${exe}"`);
  return [
    'set -e',
    `mkdir -p ${WINE_HOME}`,
    'wine64 wineboot --init',
    'wineserver -w',
    'wine64 reg import "Z:$REGFILE"',
    'wineserver -w',
    // Wine links the profile's Desktop, Documents... to the Unix home, which holds the prefix itself: they
    // become the folders of their own a Windows profile has.
    `for folder in "${PROFILE}"/*; do if [ -L "$folder" ]; then rm "$folder"; mkdir "$folder"; fi; done`,
    ...files,
    ...programs,
    `rm -f "${WINE_PREFIX}/dosdevices/z:"`,
    `touch -d '2023-09-14 08:12' "${PROFILE}"/*/* 2>/dev/null || true`,
    // A last boot as a task's (with a display, without Z:), so that the saved registry is what the sample
    // finds: the boot's own writes (fonts, the monitor) are not taken for the sample's.
    'Xvfb :0 -nolisten tcp -screen 0 1280x800x24 >/dev/null 2>&1 & XVFB=$!',
    'for attempt in $(seq 100); do [ -S /tmp/.X11-unix/X0 ] && break; sleep 0.05; done',
    `DISPLAY=:0 wine64 ${BOOT_COMMAND}`,
    'wineserver -w',
    'kill $XVFB',
  ].join('\n');
}
