import { useState } from 'preact/hooks';
import { formatBytes } from '../components/format';
import { ARCHIVE_NAME, ArchivePreview } from '../submit/archive-preview';
import { type CreationOptions, NO_OPTIONS } from '../submit/creation-options';
import { FileDrop } from '../submit/file-drop';
import { OptionsForm } from '../submit/options-form';
import { Outcomes } from '../submit/outcomes';
import { type FileChoice, type Outcome, submitFile, submitStrings, submitUrl } from '../submit/submit-requests';
import './pages.css';

type Mode = 'files' | 'url' | 'bulk';

const MODES: Array<[Mode, string]> = [
  ['files', 'Files'],
  ['url', 'URL'],
  ['bulk', 'Hashes and URLs in bulk'],
];

interface Chosen {
  key: number;
  file: File;
  choice: FileChoice;
}

let nextKey = 0;

/** Submits files, a URL, or hashes and URLs in bulk, with every creation option of the API. */
export function SubmitPage() {
  const [mode, setMode] = useState<Mode>('files');
  const [files, setFiles] = useState<Chosen[]>([]);
  const [url, setUrl] = useState('');
  const [lines, setLines] = useState('');
  const [options, setOptions] = useState<CreationOptions>(NO_OPTIONS);
  const [outcomes, setOutcomes] = useState<Outcome[]>([]);
  const [busy, setBusy] = useState(false);

  const addFiles = (added: File[]) => setFiles((old) => [...old, ...added.map((file) => ({ key: nextKey++, file, choice: { kind: 'whole' } as FileChoice }))]);
  const setChoice = (key: number, choice: FileChoice) => setFiles((old) => old.map((item) => (item.key === key ? { ...item, choice } : item)));

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      if (mode === 'files') {
        const made: Array<{ item: Chosen; outcome: Outcome }> = [];
        // One after the other: each upload is its own request with its own answer.
        for (const item of files) made.push({ item, outcome: await submitFile(item.file, item.choice, options) });
        setOutcomes(made.map(({ outcome }) => outcome));
        // What was refused stays chosen, to be corrected and sent again.
        setFiles(made.filter(({ outcome }) => outcome.taskIds.length === 0).map(({ item }) => item));
      } else if (mode === 'url') {
        setOutcomes([await submitUrl(url.trim(), options)]);
      } else {
        setOutcomes([await submitStrings(lines, options)]);
      }
    } finally {
      setBusy(false);
    }
  };

  const ready = mode === 'files' ? files.length > 0 : mode === 'url' ? url.trim() !== '' : lines.trim() !== '';
  return (
    <>
      <h1>Submit</h1>
      <div class="tabs" role="tablist">
        {MODES.map(([value, label]) => (
          <button key={value} type="button" role="tab" aria-selected={mode === value} class={mode === value ? 'tab active' : 'tab'} onClick={() => setMode(value)}>
            {label}
          </button>
        ))}
      </div>
      <form class="submit-form" onSubmit={submit}>
        {mode === 'files' && (
          <>
            <FileDrop onFiles={addFiles} />
            {files.length > 0 && (
              <ul class="chosen-files">
                {files.map((item) => (
                  <li key={item.key}>
                    <span class="mono">{item.file.name}</span> <span class="muted">{formatBytes(item.file.size)}</span>{' '}
                    <button type="button" class="link" onClick={() => setFiles((old) => old.filter((other) => other.key !== item.key))}>
                      remove
                    </button>
                    {ARCHIVE_NAME.test(item.file.name) && <ArchivePreview file={item.file} choice={item.choice} onChoice={(choice) => setChoice(item.key, choice)} />}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
        {mode === 'url' && (
          <label class="block">
            URL
            <input name="url" type="text" value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/page or example.com" />
          </label>
        )}
        {mode === 'bulk' && (
          <label class="block">
            One md5, sha1 or sha256 hash, or URL, a line
            <textarea name="strings" rows={8} value={lines} onInput={(e) => setLines(e.currentTarget.value)} />
          </label>
        )}
        <OptionsForm value={options} onChange={setOptions} showUnique={mode === 'files'} />
        <button type="submit" class="primary" disabled={!ready || busy}>
          {busy ? 'Submitting…' : 'Submit'}
        </button>
      </form>
      <Outcomes outcomes={outcomes} />
    </>
  );
}
