import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api';
import { SelectField } from '../components/select-field';
import type { CreationOptions } from './creation-options';

interface Machine {
  name: string;
  label: string;
  platform: string;
  tags: string[];
}

const ROUTES = ['none', 'drop', 'inetsim', 'internet'];
const PRIORITIES = [
  ['1', '1 (low)'],
  ['2', '2 (medium)'],
  ['3', '3 (high)'],
] as const;

interface OptionsFormProps {
  value: CreationOptions;
  onChange: (next: CreationOptions) => void;
  /** `unique` applies to file uploads only. */
  showUnique: boolean;
}

/** Every creation option of the API, as one fieldset shared by the three ways to submit. */
export function OptionsForm({ value, onChange, showUnique }: OptionsFormProps) {
  const machines = useMachines();
  const set = <K extends keyof CreationOptions>(key: K, next: CreationOptions[K]) => onChange({ ...value, [key]: next });
  const text = (key: keyof CreationOptions) => (event: Event) => set(key, (event.currentTarget as HTMLInputElement).value as never);
  const flag = (key: 'memory' | 'enforceTimeout' | 'unique') => (event: Event) => set(key, (event.currentTarget as HTMLInputElement).checked);
  const platforms = platformChoices(machines);
  return (
    <fieldset class="options-grid">
      <legend>Options</legend>
      <label>
        Package
        <input name="package" value={value.package} onInput={text('package')} placeholder="chosen by file type" />
      </label>
      <label>
        Timeout (s)
        <input name="timeout" type="number" min={0} value={value.timeout} onInput={text('timeout')} placeholder="default" />
      </label>
      <SelectField label="Priority" name="priority" value={value.priority} none="default" choices={PRIORITIES} onChange={(next) => set('priority', next)} />
      <SelectField
        label="Machine"
        name="machine"
        value={value.machine}
        none="any"
        choices={machines.map((machine) => [machine.name, `${machine.name} (${machine.platform})`] as const)}
        onChange={(next) => set('machine', next)}
      />
      <SelectField label="Platform" name="platform" value={value.platform} none="any" choices={platforms} onChange={(next) => set('platform', next)} />
      <label>
        Tags
        <input name="tags" value={value.tags} onInput={text('tags')} placeholder="comma-separated" />
      </label>
      <SelectField label="Route" name="route" value={value.route} none="default" choices={ROUTES} onChange={(next) => set('route', next)} />
      <label>
        Clock (UTC)
        <input name="clock" type="datetime-local" step={1} value={value.clock} onInput={text('clock')} />
      </label>
      <label class="wide">
        Package options
        <input name="options" value={value.options} onInput={text('options')} placeholder="key=value,key2=value2" />
      </label>
      <label>
        Custom
        <input name="custom" value={value.custom} onInput={text('custom')} />
      </label>
      <label>
        Owner
        <input name="owner" value={value.owner} onInput={text('owner')} maxLength={64} />
      </label>
      <div class="checks">
        <label>
          <input name="memory" type="checkbox" checked={value.memory} onChange={flag('memory')} /> Full memory dump
        </label>
        <label>
          <input name="enforce_timeout" type="checkbox" checked={value.enforceTimeout} onChange={flag('enforceTimeout')} /> Enforce timeout
        </label>
        {showUnique && (
          <label>
            <input name="unique" type="checkbox" checked={value.unique} onChange={flag('unique')} /> Only if not analysed before
          </label>
        )}
      </div>
    </fieldset>
  );
}

/**
 * The machines' platforms, and windows while none has it: the linux machines then run Windows programs
 * under Wine (the server refuses it, with the reason, where no machine can).
 */
function platformChoices(machines: Machine[]): Array<string | readonly [string, string]> {
  const platforms: Array<string | readonly [string, string]> = [...new Set(machines.map((machine) => machine.platform))];
  if (machines.some((machine) => machine.platform === 'linux') && !machines.some((machine) => machine.platform === 'windows')) {
    platforms.push(['windows', 'windows (Windows programs under Wine)']);
  }
  return platforms;
}

function useMachines(): Machine[] {
  const [machines, setMachines] = useState<Machine[]>([]);
  useEffect(() => {
    getJson<{ machines: Machine[] }>('/machines/list').then(
      (answer) => setMachines(answer.machines),
      () => setMachines([]),
    );
  }, []);
  return machines;
}
