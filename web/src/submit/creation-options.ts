/**
 * The creation options of the Submit page and the form fields the Cuckoo API takes them as
 * (POST /tasks/create/file|url|submit). The route and an archive's chosen file have no field of their
 * own: the analysis reads them from `options` (`route=`, `file=`).
 */
export interface CreationOptions {
  package: string;
  timeout: string;
  priority: string;
  options: string;
  machine: string;
  platform: string;
  tags: string;
  route: string;
  memory: boolean;
  enforceTimeout: boolean;
  /** A `datetime-local` value (`2026-01-31T10:11` or with seconds), read as UTC. */
  clock: string;
  custom: string;
  owner: string;
  unique: boolean;
}

export const NO_OPTIONS: CreationOptions = {
  package: '',
  timeout: '',
  priority: '',
  options: '',
  machine: '',
  platform: '',
  tags: '',
  route: '',
  memory: false,
  enforceTimeout: false,
  clock: '',
  custom: '',
  owner: '',
  unique: false,
};

/** `k=v,k2=v2` with `extra` set over what the text says (the form's route, an archive's chosen file). */
export function mergeOptions(text: string, extra: Record<string, string>): string {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '' && !Object.hasOwn(extra, item.split('=')[0]!.trim()));
  for (const [key, value] of Object.entries(extra)) if (value !== '') items.push(`${key}=${value}`);
  return items.join(',');
}

/** Cuckoo's clock format, `%m-%d-%Y %H:%M:%S`, from a `datetime-local` value. */
export function clockField(value: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  if (!match) return '';
  const [, year, month, day, hour, minute, second] = match;
  return `${month}-${day}-${year} ${hour}:${minute}:${second ?? '00'}`;
}

/**
 * The form fields for one creation request; only what was given is sent, so the server's defaults
 * apply to the rest. `unique` exists on create/file only; `file` picks an archive's member.
 */
export function creationFields(options: CreationOptions, target: { unique?: boolean; member?: string } = {}): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  const add = (name: string, value: string) => {
    if (value.trim() !== '') fields.push([name, value.trim()]);
  };
  add('package', options.package);
  add('timeout', options.timeout);
  add('priority', options.priority);
  add('options', mergeOptions(options.options, { route: options.route, file: target.member ?? '' }));
  add('machine', options.machine);
  add('platform', options.platform);
  add('tags', options.tags);
  add('custom', options.custom);
  add('owner', options.owner);
  add('clock', clockField(options.clock));
  if (options.memory) add('memory', 'true');
  if (options.enforceTimeout) add('enforce_timeout', 'true');
  if (target.unique && options.unique) add('unique', 'true');
  return fields;
}
