import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { internal, unavailable } from '../../errors.js';
import { exportedNames } from '../../formats/pe.js';
import { fileType } from '../host/file-type.js';
import type { AnalysisRequest, RunResult } from '../types.js';
import type { AgentClient } from './agent-client.js';
import { followAnalyzerStatus } from './analyzer-status.js';
import { cuckooAnalysisConf, type CuckooTaskConf } from './cuckoo-analysis-conf.js';
import { cuckooAnalyzerZip } from './cuckoo-analyzer-zip.js';
import { configureWindowsCard, type WindowsCard } from './windows-card.js';

/**
 * A Windows guest driven as Cuckoo 2.0.7's host drives one, through the agent only: the agent's
 * environment gives the system drive and the temporary folder; Cuckoo's analyzer and monitor (from the
 * operator's Cuckoo working directory) are unpacked into a new folder on the system drive, the task's
 * analysis.conf beside them, the sample stored as %TEMP%\<name>, and analyzer.py started with the agent's
 * own Python (`execpy`). The analyzer then reports to the result server named in analysis.conf and, at
 * its end, its status to the agent, which is polled here.
 */
export interface WindowsGuestOptions {
  agent: AgentClient;
  request: AnalysisRequest;
  /** The Cuckoo working directory with analyzer/windows and monitor/ (the machine's `cuckoo_cwd`). */
  cuckooCwd: string;
  /** Which of its monitors (a folder of monitor/, or `latest`). */
  monitor: string;
  /** Where the guest reaches the host's result server. */
  resultServer: { ip: string; port: number };
  collectGraceSeconds: number;
  /** The analysis card's settings; null when the task has no network. */
  card: WindowsCard | null;
  warn(message: string): void;
}

export class WindowsGuestAnalyzer {
  /** The analyzer reported its end (so its last upload is on its way). */
  finished = false;
  /** The folder the analyzer was unpacked into, once it is. */
  analyzerDir = '';

  constructor(private readonly options: WindowsGuestOptions) {}

  async start(): Promise<void> {
    const { agent, request } = this.options;
    if (request.rebootFrom) throw unavailable('reboot tasks need nestbox\'s analyzer: a Windows guest cannot run them');
    const features = (await agent.hello()).features ?? [];
    if (features.includes('pinning')) await agent.pin();
    if (!features.includes('execpy')) throw unavailable('the Windows guest runs an agent older than Cuckoo 2.0\'s (no execpy): update its agent.pyw');
    const { drive, temp } = windowsFolders(await agent.environ());
    if (this.options.card) await configureWindowsCard(agent, this.options.card);
    this.analyzerDir = await agent.mkdtemp({ dirpath: `${drive}\\` });
    await agent.extract(this.analyzerDir, await cuckooAnalyzerZip(this.options.cuckooCwd, this.options.monitor));
    const sample = request.category === 'file' ? await this.sampleFacts(temp) : null;
    const conf = cuckooAnalysisConf({ request, resultServer: this.options.resultServer, ...sample });
    await agent.store(windowsJoin(this.analyzerDir, 'analysis.conf'), Buffer.from(conf));
    if (sample) await agent.store(sample.samplePath, await readFile(request.samplePath!));
    await agent.execpy(windowsJoin(this.analyzerDir, 'analyzer.py'), { async: true, cwd: this.analyzerDir });
  }

  waitForEnd(signal: AbortSignal): Promise<RunResult['ended']> {
    const { agent, request, warn } = this.options;
    const deadline = Date.now() + (request.timeoutSeconds + this.options.collectGraceSeconds) * 1000;
    return followAnalyzerStatus(agent, { deadline, signal, warn, onLook: (finished) => (this.finished = finished) });
  }

  /** What analysis.conf says of the sample: its name in %TEMP%, its type and its exports. */
  private async sampleFacts(temp: string): Promise<Omit<CuckooTaskConf, 'request' | 'resultServer'> & { samplePath: string }> {
    const { samplePath } = this.options.request;
    if (!samplePath) throw internal('a file task without a sample', { context: { task: this.options.request.taskId } });
    const fileName = windowsFileName(basename(samplePath));
    const peExports = await exportedNames(samplePath);
    return { fileName, samplePath: windowsJoin(temp, fileName), fileType: await fileType(samplePath), peExports };
  }
}

/** SYSTEMDRIVE and TEMP from the agent's environment (Windows keeps their case; Python 2 upper-cases them). */
function windowsFolders(environ: Record<string, string>): { drive: string; temp: string } {
  const lookup = (name: string) => Object.entries(environ).find(([key]) => key.toUpperCase() === name)?.[1];
  const drive = lookup('SYSTEMDRIVE');
  const temp = lookup('TEMP') ?? lookup('TMP');
  if (!drive || !temp) throw unavailable('the guest\'s agent has no SYSTEMDRIVE or TEMP in its environment: is it a Windows guest?');
  return { drive: drive.replace(/[\\/]+$/, ''), temp };
}

/** A Windows path joined as Windows joins it: one backslash between, none added after a separator. */
export function windowsJoin(dir: string, name: string): string {
  return /[\\/]$/.test(dir) ? `${dir}${name}` : `${dir}\\${name}`;
}

const RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;

/** The sample keeps its name, minus what Windows refuses in a file name (and its reserved device names). */
export function windowsFileName(name: string): string {
  const cleaned = name.replace(/[\u0000-\u001f<>:"/\\|?*]/g, '_').replace(/[. ]+$/, '').slice(0, 200);
  if (!cleaned) return 'sample';
  return RESERVED.test(cleaned) ? `_${cleaned}` : cleaned;
}
