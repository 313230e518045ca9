import type { AnalysisRequest } from '../types.js';

/**
 * The analysis.conf Cuckoo 2.0.7's host gives its Windows analyzer, for one task: one `[analysis]`
 * section of `key = value` lines, which the analyzer reads with Python 2's ConfigParser and turns into
 * booleans (`True`/`False`), numbers or text. Cuckoo's host joins the lines with a bare line feed and so
 * does this (ConfigParser reads either ending). ConfigParser expands `%` in values, so a value's `%` is
 * written `%%`; a line break in a value would start another key, so it becomes a space.
 */
export interface CuckooTaskConf {
  request: AnalysisRequest;
  /** File tasks: the sample's name in the guest (the analyzer runs %TEMP%\<file_name>). */
  fileName?: string;
  /** File tasks: where the sample is stored in the guest (the target Cuckoo's analyzer records). */
  samplePath?: string;
  /** File tasks: libmagic's description, from which the analyzer picks a package when none is named. */
  fileType?: string;
  /** File tasks: the PE's exported names, for the dll package. */
  peExports?: string[];
  /** Where the analyzer sends its results (Cuckoo's result server protocol). */
  resultServer: { ip: string; port: number };
}

export function cuckooAnalysisConf(task: CuckooTaskConf): string {
  const { request } = task;
  const values: Record<string, string | number | boolean> = {};
  if (request.category === 'file') {
    values.file_name = task.fileName ?? '';
    values.file_type = task.fileType ?? '';
    values.pe_exports = (task.peExports ?? []).join(',');
  }
  Object.assign(values, {
    id: request.taskId,
    ip: task.resultServer.ip,
    port: task.resultServer.port,
    category: request.category,
    target: request.category === 'url' ? (request.url ?? '') : (task.samplePath ?? ''),
    package: request.package,
    options: Object.entries(request.options).map(([key, value]) => `${key}=${value}`).join(','),
    enforce_timeout: request.enforceTimeout,
    clock: cuckooClock(request.clock),
    terminate_processes: false,
    timeout: request.timeoutSeconds,
  });
  const lines = Object.entries(values).map(([key, value]) => `${key} = ${confValue(value)}`);
  return ['[analysis]', ...lines].join('\n');
}

function confValue(value: string | number | boolean): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value).replace(/[\r\n]+/g, ' ').replaceAll('%', '%%');
}

/** The guest's clock as Cuckoo writes it (`%Y%m%dT%H:%M:%S`, UTC here); the host's time when the task's does not parse. */
function cuckooClock(clock: string): string {
  const parsed = Date.parse(clock);
  const iso = new Date(Number.isNaN(parsed) ? Date.now() : parsed).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 19)}`;
}
