import { useState } from 'preact/hooks';
import { send } from '../api';
import { formatBytes } from '../components/format';
import type { FileChoice } from './submit-requests';

interface Member {
  name: string;
  size: number;
  type: string;
}

/** Names that look like an archive nestbox unpacks; the server has the last word. */
export const ARCHIVE_NAME = /\.(zip|7z|rar|tar|tgz|tbz2?|txz|gz|bz2|xz)$/i;

interface ArchivePreviewProps {
  file: File;
  choice: FileChoice;
  onChoice: (choice: FileChoice) => void;
}

/**
 * The members of an archive (POST /ui/api/archive/preview), to run one of them (create/file with the
 * `file=` option, which the archive package reads in the machine), each as its own task (create/submit
 * unpacks it), or the archive as it is.
 */
export function ArchivePreview({ file, choice, onChoice }: ArchivePreviewProps) {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const preview = async () => {
    setBusy(true);
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      setMembers((await send<{ members: Member[] }>('POST', '/ui/api/archive/preview', form)).members);
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  if (members === null) {
    return (
      <div class="archive-preview">
        <button type="button" onClick={preview} disabled={busy}>
          {busy ? 'Reading…' : 'Preview members'}
        </button>
        {error && <span class="error"> {error}</span>}
      </div>
    );
  }
  const group = `member-${file.name}-${file.size}`;
  const radio = (value: FileChoice, label: string) => (
    <label>
      <input type="radio" name={group} checked={sameChoice(choice, value)} onChange={() => onChoice(value)} /> {label}
    </label>
  );
  return (
    <div class="archive-preview">
      <div class="choices">
        {radio({ kind: 'whole' }, 'The archive, the first runnable file inside')}
        {radio({ kind: 'each' }, `Each of its ${members.length} file(s) as its own task`)}
      </div>
      <table class="dense members">
        <thead>
          <tr>
            <th>Run</th>
            <th>Member</th>
            <th>Size</th>
            <th>Type</th>
          </tr>
        </thead>
        <tbody>
          {members.map((member) => (
            <tr key={member.name}>
              <td>
                <input
                  type="radio"
                  name={group}
                  aria-label={`run ${member.name}`}
                  value={member.name}
                  checked={sameChoice(choice, { kind: 'member', member: member.name })}
                  onChange={() => onChoice({ kind: 'member', member: member.name })}
                />
              </td>
              <td class="mono">{member.name}</td>
              <td class="num">{formatBytes(member.size)}</td>
              <td>{member.type}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function sameChoice(a: FileChoice, b: FileChoice): boolean {
  return a.kind === b.kind && (a.kind !== 'member' || (b.kind === 'member' && a.member === b.member));
}
