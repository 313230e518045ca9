import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePeFile } from '../../src/formats/pe.js';
import { windowsSample, type WindowsBits, type WindowsSampleName } from '../helpers/windows-samples.js';

/**
 * The Windows samples the setup step builds (scripts/build-windows-samples.sh), read with nestbox's own PE
 * parser: each is a PE of its bitness and subsystem that imports the calls its reports are to show.
 */
const SAMPLES: Record<WindowsSampleName, { gui?: boolean; dll?: boolean; imports: string[] }> = {
  dropper: { imports: ['URLDownloadToFileW', 'CreateProcessW'] },
  persistence: { imports: ['RegCreateKeyExW', 'RegSetValueExW', 'OpenSCManagerW', 'CreateServiceW'] },
  inject: { imports: ['CreateProcessW', 'VirtualAllocEx', 'WriteProcessMemory', 'CreateRemoteThread', 'ResumeThread'] },
  mutex: { imports: ['CreateMutexW', 'GetLastError', 'CreateProcessW'] },
  ransom: { imports: ['FindFirstFileW', 'ReadFile', 'WriteFile', 'MoveFileExW', 'CreateProcessW'] },
  'payload-dll': { dll: true, imports: ['CreateFileW', 'CreateMutexW'] },
  'evade-wine': { imports: ['IsDebuggerPresent', 'CheckRemoteDebuggerPresent', 'RegOpenKeyExW', 'GetProcAddress'] },
  gui: { gui: true, imports: ['RegisterClassW', 'CreateWindowExW', 'SetTimer', 'GetMessageW'] },
  'shell-execute': { imports: ['ShellExecuteExW', 'WaitForSingleObject', 'GetExitCodeProcess'] },
};

const MACHINE: Record<WindowsBits, string> = { 32: 'IMAGE_FILE_MACHINE_I386', 64: 'IMAGE_FILE_MACHINE_AMD64' };

describe('the Windows samples', () => {
  for (const bits of [32, 64] as const) {
    for (const [name, expected] of Object.entries(SAMPLES) as Array<[WindowsSampleName, (typeof SAMPLES)[WindowsSampleName]]>) {
      it(`${name} is a ${bits}-bit ${expected.dll ? 'DLL' : expected.gui ? 'GUI program' : 'console program'} importing ${expected.imports.join(', ')}`, async () => {
        const pe = await parsePeFile(windowsSample(name, bits));
        assert.ok(pe, 'a PE');
        assert.equal(pe.pe_header.machine, MACHINE[bits]);
        assert.equal(pe.pe_header.magic, bits === 64 ? 'PE32+' : 'PE32');
        assert.equal(pe.pe_header.dll, expected.dll === true);
        assert.equal(pe.pe_header.subsystem, expected.gui ? 'IMAGE_SUBSYSTEM_WINDOWS_GUI' : 'IMAGE_SUBSYSTEM_WINDOWS_CUI');
        const imported = new Set(pe.pe_imports.flatMap((dll) => dll.imports.map((entry) => entry.name)));
        assert.deepEqual(expected.imports.filter((api) => !imported.has(api)), []);
      });
    }
    it(`the ${bits}-bit DLL exports RunPayload by its plain name, its only export (rundll32's default)`, async () => {
      const pe = await parsePeFile(windowsSample('payload-dll', bits));
      assert.deepEqual(pe?.pe_exports.map((entry) => entry.name), ['RunPayload']);
    });
  }
});
