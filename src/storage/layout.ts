import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders created in every analysis folder when its analysis starts, as Cuckoo does. */
export const ANALYSIS_SUBDIRS = ['files', 'shots', 'memory', 'reports', 'logs', 'buffer', 'extracted', 'package_files'] as const;

/**
 * Cuckoo's storage layout, so tools that read it keep working:
 *   storage/analyses/<id>/{binary,reports/,logs/,shots/,memory/,files/,package_files/,dump.pcap,...}
 *   storage/binaries/<sha256>
 */
export class StorageLayout {
  readonly analyses: string;
  readonly binaries: string;

  constructor(
    readonly root: string,
    readonly tmp: string,
  ) {
    this.analyses = join(root, 'analyses');
    this.binaries = join(root, 'binaries');
  }

  ensure(): void {
    for (const dir of [this.analyses, this.binaries, this.tmp]) mkdirSync(dir, { recursive: true });
  }

  analysis(taskId: number): AnalysisPaths {
    return new AnalysisPaths(join(this.analyses, String(taskId)));
  }

  binary(sha256: string): string {
    return join(this.binaries, sha256);
  }
}

export class AnalysisPaths {
  constructor(readonly dir: string) {}

  get binary() { return join(this.dir, 'binary'); }
  get taskJson() { return join(this.dir, 'task.json'); }
  get reports() { return join(this.dir, 'reports'); }
  get reportJson() { return join(this.dir, 'reports', 'report.json'); }
  get reportHtml() { return join(this.dir, 'reports', 'report.html'); }
  /** Every call of the behaviour log, indexed for the web interface's paginated calls (report/calls-index.ts). */
  get callsIndex() { return join(this.dir, 'reports', 'calls.sqlite'); }
  get logs() { return join(this.dir, 'logs'); }
  get shots() { return join(this.dir, 'shots'); }
  get memory() { return join(this.dir, 'memory'); }
  get files() { return join(this.dir, 'files'); }
  get packageFiles() { return join(this.dir, 'package_files'); }
  get pcap() { return join(this.dir, 'dump.pcap'); }
  get analysisLog() { return join(this.dir, 'analysis.log'); }
  get taskLog() { return join(this.dir, 'cuckoo.log'); }
  get memoryDump() { return join(this.dir, 'memory.dmp'); }
  get filesJson() { return join(this.dir, 'files.json'); }
  /** What the sample supervisor did (linux machines): one JSON line per shortened sleep or captured file. */
  get supervisorLog() { return join(this.dir, 'logs', 'supervisor.jsonl'); }

  create(): void {
    for (const sub of ANALYSIS_SUBDIRS) mkdirSync(join(this.dir, sub), { recursive: true });
  }
}
