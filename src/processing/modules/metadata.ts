import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { sha256File } from '../fileinfo.js';
import type { ProcessingModule } from '../types.js';

interface OutputFile {
  dirname: string;
  basename: string;
  sha256: string;
}

/** Cuckoo's metadata.output: the capture, memory dumps and dropped files this analysis produced. */
export const metadataModule: ProcessingModule<'metadata'> = {
  key: 'metadata',
  async run(input) {
    const { paths } = input;
    const describe = async (path: string): Promise<OutputFile | undefined> => {
      const sha256 = await sha256File(path).catch(() => undefined);
      if (sha256 === undefined) return undefined;
      const rel = relative(paths.dir, path);
      const slash = rel.lastIndexOf('/');
      return { dirname: slash < 0 ? '' : rel.slice(0, slash), basename: rel.slice(slash + 1), sha256 };
    };
    const inFolder = async (dir: string, pattern: RegExp) => {
      const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => pattern.test(name)).sort();
      const described: OutputFile[] = [];
      for (const name of names) {
        const entry = await describe(join(dir, name));
        if (entry) described.push(entry);
      }
      return described;
    };
    const output: Record<string, unknown> = {
      memdumps: await inFolder(paths.memory, /\.dmp$/),
      dropped: await inFolder(paths.files, /./),
    };
    if (existsSync(paths.pcap)) output.pcap = await describe(paths.pcap);
    return { output };
  },
};
