import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { connectionNamed } from '../../src/machinery/qemu/windows-card.js';
import { windowsFileName, windowsJoin } from '../../src/machinery/qemu/windows-guest.js';

/** How the host names things in a Windows guest: the sample's file name, joined paths, the analysis card. */
describe('names in a Windows guest', () => {
  it('keeps the sample\'s name but for what Windows refuses in a file name', () => {
    assert.equal(windowsFileName('invoice 100%.exe'), 'invoice 100%.exe');
    assert.equal(windowsFileName('a<b>c:d"e|f?g*h.exe'), 'a_b_c_d_e_f_g_h.exe');
    assert.equal(windowsFileName('setup.exe. . '), 'setup.exe', 'Windows drops trailing dots and spaces');
    assert.equal(windowsFileName('CON.txt'), '_CON.txt', 'a device name is no file name');
    assert.equal(windowsFileName('lpt1'), '_lpt1');
    assert.equal(windowsFileName('console.exe'), 'console.exe');
    assert.equal(windowsFileName('...'), 'sample');
  });

  it('joins as Windows does, adding no second separator', () => {
    assert.equal(windowsJoin('C:\\tmpab12cd', 'analysis.conf'), 'C:\\tmpab12cd\\analysis.conf');
    assert.equal(windowsJoin('C:\\', 'x'), 'C:\\x');
    assert.equal(windowsJoin('C:/', 'x'), 'C:/x');
  });

  it('finds the analysis card in getmac\'s CSV by its MAC, whatever the case and separator', () => {
    const csv = [
      '"Local Area Connection","Intel(R) PRO/1000 MT Network Connection","52-54-00-4E-42-01","\\Device\\Tcpip_{A}"',
      '"Ethernet 2","Intel(R) PRO/1000 MT Network Connection #2","52-54-00-4E-42-02","Media disconnected"',
      '',
    ].join('\r\n');
    assert.equal(connectionNamed(csv, '52:54:00:4e:42:02'), 'Ethernet 2');
    assert.equal(connectionNamed(csv, '52:54:00:4e:42:09'), null);
  });
});
