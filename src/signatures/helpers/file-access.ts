import type { BehaviorEvent } from '../../report/events.js';

/** What an event did to a path. */
export type FileAccess = 'read' | 'write' | 'create' | 'truncate' | 'delete' | 'move' | 'chmod' | 'chown' | 'link' | 'mkdir';

export interface FileTouch {
  path: string;
  access: readonly FileAccess[];
}

/** Event kinds that touch files. */
export const FILE_KINDS = [
  'file.open',
  'file.write',
  'file.rename',
  'file.delete',
  'file.mkdir',
  'file.rmdir',
  'file.chmod',
  'file.chown',
  'file.link',
] as const;

export type FileKind = (typeof FILE_KINDS)[number];

/** Accesses that change a file's content or put a new file in place. */
export const MODIFY: readonly FileAccess[] = ['write', 'create', 'truncate', 'link'];
/** Accesses that make a file disappear from where it was. */
export const REMOVE: readonly FileAccess[] = ['delete', 'move', 'truncate'];

// Linux open(2) flags (asm-generic).
const O_ACCMODE = 0o3;
const O_WRONLY = 0o1;
const O_RDWR = 0o2;
const O_CREAT = 0o100;
const O_TRUNC = 0o1000;

export function openAccess(flags: number): FileAccess[] {
  const mode = flags & O_ACCMODE;
  const access: FileAccess[] = [];
  if (mode !== O_WRONLY) access.push('read');
  if (mode === O_WRONLY || mode === O_RDWR) access.push('write');
  if (flags & O_CREAT) access.push('create');
  if (flags & O_TRUNC && mode !== 0) access.push('truncate');
  return access;
}

// The engine hands each event to every interested signature in turn, so remembering the last answer saves
// all but the first of them the work.
let lastEvent: BehaviorEvent | undefined;
let lastTouches: readonly FileTouch[] = [];

/**
 * The paths an event touched and how. Failed attempts count too: an attempt to read /etc/shadow says as much
 * about the sample's intent as a successful one.
 */
export function fileTouches(event: BehaviorEvent): readonly FileTouch[] {
  if (event !== lastEvent) {
    lastTouches = touchesOf(event);
    lastEvent = event;
  }
  return lastTouches;
}

function touchesOf(event: BehaviorEvent): FileTouch[] {
  switch (event.kind) {
    case 'file.open':
      return [{ path: event.path, access: openAccess(event.flags) }];
    case 'file.write':
      return [{ path: event.path, access: ['write'] }];
    case 'file.rename':
      return [
        { path: event.from, access: ['move'] },
        { path: event.to, access: ['write', 'create'] },
      ];
    case 'file.delete':
    case 'file.rmdir':
      return [{ path: event.path, access: ['delete'] }];
    case 'file.mkdir':
      return [{ path: event.path, access: ['mkdir', 'create'] }];
    case 'file.chmod':
      return [{ path: event.path, access: ['chmod'] }];
    case 'file.chown':
      return [{ path: event.path, access: ['chown'] }];
    case 'file.link':
      return [{ path: event.to, access: ['link', 'create', 'write'] }];
    default:
      return [];
  }
}

export function touches(touch: FileTouch, wanted: readonly FileAccess[]): boolean {
  return wanted.some((access) => touch.access.includes(access));
}
