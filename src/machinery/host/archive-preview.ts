import { mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { AnalysisPackage } from '../../analysis/packages/index.js';
import { chooseUnpacked, type UnpackedCandidate } from '../../analysis/packages/unpacked-choice.js';
import { archiveKindOf, type ArchiveLimits, unpackArchive } from '../../storage/archives.js';
import { fileType } from './file-type.js';

/** Formats of one compressed stream: the machine's archive package also unpacks the tar inside them. */
const SINGLE_STREAM = new Set(['gzip', 'bzip2', 'xz']);

export interface ArchivePreview {
  /** The archive as the machine's archive package will be given it. */
  path: string;
  fileType: string;
  /** The task's `file` option. */
  wanted?: string;
  /** The passwords the machine will try, in order. */
  passwords: readonly string[];
  limits: ArchiveLimits;
  /** A folder of the host the preview unpacks into (and removes again). */
  workDir: string;
  /** The packages the machine offers, as chooseUnpacked takes them: all unless it says otherwise. */
  offered?: readonly AnalysisPackage[];
}

/**
 * The file of an archive the machine will run, and its package, worked out on the host before the
 * machine is made: on a linux machine a Windows program needs Wine's layer under the machine's disk,
 * which can only be mounted with it; a qemu Linux guest has no Wine and refuses one up front. The archive
 * is unpacked with the host's safe unpacking (storage/archives.ts) as deep as the archive package goes in
 * the machine (one level, and a tar inside a compressed stream), and the file is chosen as
 * pickUnpackedFile() chooses it (among the packages the machine offers). Undefined when the host cannot tell (a format it does
 * not open, a damaged archive, no password fits): the machine then unpacks it as it always does.
 */
export async function previewArchivePick(archive: ArchivePreview): Promise<(UnpackedCandidate & { package: AnalysisPackage }) | undefined> {
  const kind = archiveKindOf(archive.fileType);
  if (kind === undefined) return undefined;
  const dir = await mkdtemp(join(archive.workDir, 'archive-preview-'));
  try {
    const limits = { ...archive.limits, passwords: archive.passwords, maxDepth: SINGLE_STREAM.has(kind) ? 2 : 1 };
    const files = await unpackArchive({ path: archive.path, name: basename(archive.path), kind }, dir, limits, fileType);
    // The tar inside a compressed stream is unpacked in place in the machine: its name is no folder there.
    const inMachine = (member: string) => (SINGLE_STREAM.has(kind) ? member.slice(member.indexOf('/') + 1) : member);
    return chooseUnpacked(files.map((file) => ({ name: inMachine(file.member), fileType: file.fileType })), archive.wanted, archive.offered);
  } catch {
    return undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
