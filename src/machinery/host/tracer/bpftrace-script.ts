import { SETID_CALLS } from './trace-records.js';

/**
 * Writes the bpftrace program that records one sandbox's behaviour.
 *
 * Every probe is filtered to the sandbox's cgroup and prints compact records, one printf each:
 *
 *     <marker> <letter> <nsecs> <tid> <parts> <numbers...> <tail>
 *
 * `tail` is the rest of the record: a single string (path, name, comm), so spaces in it are no problem;
 * for newlines in it, see bpftrace-output.ts. Records that carry more than one string say how many `s`
 * parts follow (`s <nsecs> <tid> <index> <text>`); the parser joins them by (tid, nsecs). A string is read with `str()`, which stops at STRING_LIMIT bytes (bpftrace 0.17
 * keeps strings on the small BPF stack); longer paths get one continuation part (index 100 + string
 * index), so paths up to twice that are whole.
 *
 * Strings are read when the system call returns, when the kernel has just paged them in (reading at
 * entry misses strings in pages not touched yet), except exec's argv, which is read from the new
 * program's stack. A thread's pid, parent and name are printed once (`h`) when it is first seen.
 * Writes are summed in the kernel per (process, fd) and reported (`W`) when the fd is closed or
 * replaced, and at the end.
 */
export const STRING_LIMIT = 159;
/** BPFTRACE_STRLEN: `str()` keeps STRING_LIMIT bytes and the NUL. Larger values overflow the 512-byte BPF stack. */
export const BPFTRACE_STRLEN = STRING_LIMIT + 1;
const MAX_ARGV = 32;
/** `s` part indexes at and above this continue the string with index (i - CONTINUATION). */
export const CONTINUATION = 100;

export interface ScriptOptions {
  /**
   * Our own pid: only it can arm the program and ask whether it is ready. Or a bpftrace expression that
   * gives it at run time, such as the positional parameter `'$1'` (a program written before its owner runs).
   */
  ownerPid: number | string;
  /**
   * This program's key: `pread64(nonce, buf, 1, cgroupId)` from the owner (a bad fd, so the call fails
   * harmlessly) sets the cgroup to record. Until then the program records nothing, so it can be started
   * and compiled ahead of time, before the sandbox exists.
   */
  nonce: number;
  /** Starts every record (see bpftrace-output.ts): random, so that a sample cannot forge one. */
  marker: string;
  /** System calls this kernel has tracepoints for (`sys_enter_<name>` exists). */
  hasTracepoint: (syscall: string) => boolean;
  /**
   * Length of a line of spaces printed after every control record (`r`). bpftrace run with `-B full`
   * writes its output in blocks, cheaply, but holds a control record back until the block fills:
   * padding longer than the block pushes it out at once. 0 (the default) for line-buffered output.
   */
  flushPadding?: number;
}

/** x86_64 numbers of the module calls: kernels built without module support have no tracepoints for them. */
const MODULE_SYSCALLS = [
  { name: 'init_module', nr: 175, call: 0 },
  { name: 'finit_module', nr: 313, call: 1 },
  { name: 'delete_module', nr: 176, call: 2 },
];

export const SETID_ARGS: Record<string, string[]> = {
  setuid: ['uid'],
  setgid: ['gid'],
  setreuid: ['ruid', 'euid'],
  setregid: ['rgid', 'egid'],
  setresuid: ['ruid', 'euid', 'suid'],
  setresgid: ['rgid', 'egid', 'sgid'],
  setfsuid: ['uid'],
  setfsgid: ['gid'],
};

type Slot = 'p0' | 'p1' | 'n0' | 'n1' | 'n2' | 'n3';
type Saves = Partial<Record<Slot, string>>;
const SLOTS: Slot[] = ['p0', 'p1', 'n0', 'n1', 'n2', 'n3'];
/** The saved-arguments tuple of a thread in no traced call. */
const NO_CALL = '(0, (uint64)0, (uint64)0, (int64)0, (int64)0, (int64)0, (int64)0)';

/** `@p0[tid]`... in probe bodies are the fields of the tuple the return probe read into `$v`. */
function slotsToTuple(body: string): string {
  return body.replace(/@(p0|p1|n0|n1|n2|n3)\[tid\]/g, (_, slot: Slot) => `$v.${SLOTS.indexOf(slot) + 1}`);
}

export function bpftraceScript(options: ScriptOptions): string {
  return new ScriptWriter(options).write();
}

/** The tracepoints a script uses, for bpftrace's probe lookup. */
export function tracepointsOf(script: string): string[] {
  return [...new Set(script.match(/^tracepoint:[a-z_0-9]+:[a-z_0-9]+/gm) ?? [])].map((p) => p.slice('tracepoint:'.length));
}

class ScriptWriter {
  private readonly probes: string[] = [];
  /**
   * The cgroup id is compared before anything else but the call's own arguments: for every other
   * process on the host that is all the work done.
   */
  private readonly cg = 'cgroup == @cg';
  private nextId = 1;

  private readonly padding: string;

  constructor(private readonly options: ScriptOptions) {
    // A line of its own after the record: glibc writes whole blocks and keeps the rest, so the record's
    // newline must come at least a block before the end. The parser skips lines without the marker.
    this.padding = options.flushPadding ? `\\n${' '.repeat(options.flushPadding)}` : '';
  }

  write(): string {
    this.probes.push(this.readyProbe(1));
    this.probes.push(this.armProbe());
    this.processProbes();
    this.fileProbes();
    this.descriptorProbes();
    this.networkProbes();
    this.memoryProbes();
    this.privilegeProbes();
    this.moduleProbes();
    this.probes.push(this.barrierProbe());
    this.probes.push(this.dumpProbe());
    this.probes.push(this.readyProbe(2));
    // Every printf is a record, and every record starts with the marker.
    return `${this.probes.join('\n\n')}\n`.replaceAll('printf("', `printf("${this.options.marker} `);
  }

  /**
   * Attached first and last (bpftrace attaches tracepoints in order, older versions in reverse order):
   * once both have answered `kill(owner, 0)`, every probe in between is attached.
   */
  private readyProbe(which: number): string {
    const me = this.options.ownerPid;
    return `tracepoint:syscalls:sys_enter_kill /pid == ${me} && args->pid == ${me} && args->sig == 0/ { printf("r 0 0 0 ${which} 0${this.padding}\\n"); }`;
  }

  /**
   * `kill(nonce, 0)` from outside the sandbox (no process has that pid) stops recording and prints a
   * marker with the CPU it ran on (`r ... 4 <cpu>`). Each CPU has its own buffer, read in order, so
   * once the marker of every CPU has been read, every record before it has been too.
   */
  private barrierProbe(): string {
    return `tracepoint:syscalls:sys_enter_kill /args->pid == ${this.options.nonce} && args->sig == 0 && cgroup != @cg/ {
  @cg = -1;
  printf("r 0 0 0 4 %d${this.padding}\\n", cpu);
}`;
  }

  /**
   * `kill(nonce, SIGCONT)` from the owner, once drained: prints the write totals no close reported
   * (`e`, then bpftrace's printout of @wb), forgets every thread it knew and `r ... 5` after them. The
   * program has then said all it will about that sandbox and keeps nothing of it: it can be armed for
   * the next one, or killed (letting bpftrace exit by itself takes seconds: it detaches probe after probe).
   */
  private dumpProbe(): string {
    const me = this.options.ownerPid;
    return `tracepoint:syscalls:sys_enter_kill /pid == ${me} && args->pid == ${this.options.nonce} && args->sig == 18/ {
  printf("e 0 0 0\\n");
  print(@wb);
  clear(@wb);
  clear(@seen);
  clear(@a);
  clear(@pd);
  printf("r 0 0 0 5 0${this.padding}\\n");
}`;
  }

  /** Sets the cgroup to record, when none is (not yet, or no longer after a drain), and says so (`r ... 3 <id>`). */
  private armProbe(): string {
    const me = this.options.ownerPid;
    return `tracepoint:syscalls:sys_enter_pread64 /pid == ${me} && args->fd == ${this.options.nonce} && (@cg == 0 || @cg == -1)/ {
  @cg = args->pos;
  printf("r 0 0 0 3 %llu${this.padding}\\n", @cg);
}`;
  }

  private processProbes(): void {
    this.add(
      'tracepoint:task:task_newtask',
      `${this.cg}`,
      `$t = nsecs;${IDENTIFY}
  if ((args->clone_flags & 0x10000) == 0) { printf("F %llu %d 0 %d\\n", $t, tid, args->pid); }`,
    );
    this.add(
      'tracepoint:sched:sched_process_exec',
      this.cg,
      `$t = nsecs;
  @seen[tid] = 1;
  @a[tid] = ${NO_CALL};
  printf("h %llu %d 0 %d %d %s\\n", $t, tid, pid, curtask->real_parent->tgid, comm);${FLUSH_PENDING_DUP}
  $sp = curtask->mm->start_stack;
  $argc = *(uint64 *)uptr($sp);
  $n = $argc > ${MAX_ARGV} ? ${MAX_ARGV} : $argc;
  printf("X %llu %d %d %d %s\\n", $t, tid, $n, $argc, str(args->filename));
  $i = (uint64)0;
  while ($i < ${MAX_ARGV}) {
    if ($i >= $n) { break; }
    $a = *(uint64 *)uptr($sp + 8 + $i * 8);
    printf("s %llu %d %d %s\\n", $t, tid, $i, str(uptr($a)));
    $i++;
  }`,
    );
    for (const name of ['execve', 'execveat']) {
      const saves: Saves = name === 'execve' ? { p0: 'args->filename', p1: 'args->argv' } : { p0: 'args->filename', p1: 'args->argv', n0: 'args->fd' };
      this.pair(name, saves, `@a[tid] = ${NO_CALL};
  if ($r < 0) {
    $argv = (uint64)@p1[tid];
    $argc = (uint64)0;
    while ($argc < ${MAX_ARGV}) {
      if ($argv == 0) { break; }
      if (*(uint64 *)uptr($argv + $argc * 8) == 0) { break; }
      $argc++;
    }
    ${stringRecord('E', '$argc', [['%d', '$r'], ['%d', name === 'execveat' ? '@n0[tid]' : '-100']], '@p0[tid]')}
    $i = (uint64)0;
    while ($i < ${MAX_ARGV}) {
      if ($i >= $argc) { break; }
      $a = *(uint64 *)uptr($argv + $i * 8);
      printf("s %llu %d %d %s\\n", $t, tid, $i, str(uptr($a)));
      $i++;
    }
  }`);
    }
    // group_dead: the last thread of the process is leaving, so the process has exited.
    this.add(
      'tracepoint:sched:sched_process_exit',
      this.cg,
      `$t = nsecs;${IDENTIFY}
  if (args->group_dead) { printf("Q %llu %d 0 %d\\n", $t, tid, curtask->exit_code); }
  delete(@seen[tid]);
  delete(@a[tid]);`,
    );
    // Renames during exec are the kernel naming the new program, not the program renaming itself.
    this.add(
      'tracepoint:task:task_rename',
      `${this.cg} && @a[tid].0 != ${this.idOf('execve')} && @a[tid].0 != ${this.idOf('execveat')}`,
      `$t = nsecs;${IDENTIFY}
  printf("N %llu %d 0 %d %s\\n", $t, tid, args->pid, args->newcomm);`,
    );
    this.pair('ptrace', { n0: 'args->request', n1: 'args->pid' }, `printf("t %llu %d 0 %d %d %d\\n", $t, tid, @n0[tid], @n1[tid], $r);`);
    for (const name of ['kill', 'tkill']) {
      this.pair(name, { n0: 'args->pid', n1: 'args->sig' }, `printf("g %llu %d 0 %d %d %d\\n", $t, tid, @n0[tid], @n1[tid], $r);`);
    }
    this.pair('tgkill', { n0: 'args->tgid', n1: 'args->sig' }, `printf("g %llu %d 0 %d %d %d\\n", $t, tid, @n0[tid], @n1[tid], $r);`);
  }

  private fileProbes(): void {
    const open = (dirfd: string, flags: string, mode: string) =>
      `${flushWrites('$r')}
  ${stringRecord('O', '0', [['%d', dirfd], ['%d', flags], ['%d', mode], ['%d', '$r']], '@p0[tid]')}`;
    this.pair('open', { p0: 'args->filename', n1: 'args->flags', n2: 'args->mode' }, open('-100', '@n1[tid]', '@n2[tid]'));
    this.pair('openat', { p0: 'args->filename', n0: 'args->dfd', n1: 'args->flags', n2: 'args->mode' }, open('@n0[tid]', '@n1[tid]', '@n2[tid]'));
    this.pair('creat', { p0: 'args->pathname', n2: 'args->mode' }, open('-100', '577', '@n2[tid]'));
    this.pair(
      'openat2',
      { p0: 'args->filename', n0: 'args->dfd', p1: 'args->how' },
      open('@n0[tid]', '*(uint64 *)uptr(@p1[tid])', '*(uint64 *)uptr(@p1[tid] + 8)'),
    );
    this.pair('chdir', { p0: 'args->filename' }, stringRecord('K', '0', [['%d', '-100'], ['%d', '$r']], '@p0[tid]'));
    this.pair('fchdir', { n0: 'args->fd' }, `printf("K %llu %d 0 %d %d \\n", $t, tid, @n0[tid], $r);`);

    const rename = (fromDirfd: string, toDirfd: string) =>
      twoStringRecord('R', [['%d', fromDirfd], ['%d', toDirfd], ['%d', '$r']], '@p0[tid]', '@p1[tid]');
    this.pair('rename', { p0: 'args->oldname', p1: 'args->newname' }, rename('-100', '-100'));
    for (const name of ['renameat', 'renameat2']) {
      this.pair(name, { n0: 'args->olddfd', p0: 'args->oldname', n1: 'args->newdfd', p1: 'args->newname' }, rename('@n0[tid]', '@n1[tid]'));
    }

    const unlink = (dirfd: string, directory: string) =>
      stringRecord('U', '0', [['%d', dirfd], ['%d', directory], ['%d', '$r']], '@p0[tid]');
    this.pair('unlink', { p0: 'args->pathname' }, unlink('-100', '0'));
    this.pair('rmdir', { p0: 'args->pathname' }, unlink('-100', '1'));
    this.pair('unlinkat', { n0: 'args->dfd', p0: 'args->pathname', n1: 'args->flag' }, unlink('@n0[tid]', '(@n1[tid] & 0x200) ? 1 : 0'));

    const mkdir = (dirfd: string) => stringRecord('M', '0', [['%d', dirfd], ['%d', '@n1[tid]'], ['%d', '$r']], '@p0[tid]');
    this.pair('mkdir', { p0: 'args->pathname', n1: 'args->mode' }, mkdir('-100'));
    this.pair('mkdirat', { n0: 'args->dfd', p0: 'args->pathname', n1: 'args->mode' }, mkdir('@n0[tid]'));

    const chmod = (dirfd: string) => stringRecord('A', '0', [['%d', dirfd], ['%d', '@n1[tid]'], ['%d', '$r']], '@p0[tid]');
    this.pair('chmod', { p0: 'args->filename', n1: 'args->mode' }, chmod('-100'));
    this.pair('fchmod', { n0: 'args->fd', n1: 'args->mode' }, `printf("A %llu %d 0 %d %d %d \\n", $t, tid, @n0[tid], @n1[tid], $r);`);
    for (const name of ['fchmodat', 'fchmodat2']) {
      this.pair(name, { n0: 'args->dfd', p0: 'args->filename', n1: 'args->mode' }, chmod('@n0[tid]'));
    }

    const chown = (dirfd: string) =>
      stringRecord('G', '0', [['%d', dirfd], ['%d', '@n1[tid]'], ['%d', '@n2[tid]'], ['%d', '$r']], '@p0[tid]');
    for (const name of ['chown', 'lchown']) {
      this.pair(name, { p0: 'args->filename', n1: 'args->user', n2: 'args->group' }, chown('-100'));
    }
    this.pair(
      'fchown',
      { n0: 'args->fd', n1: 'args->user', n2: 'args->group' },
      `printf("G %llu %d 0 %d %d %d %d \\n", $t, tid, @n0[tid], @n1[tid], @n2[tid], $r);`,
    );
    this.pair('fchownat', { n0: 'args->dfd', p0: 'args->filename', n1: 'args->user', n2: 'args->group' }, chown('@n0[tid]'));

    const link = (symbolic: string, targetDirfd: string, dirfd: string) =>
      twoStringRecord('L', [['%d', symbolic], ['%d', targetDirfd], ['%d', dirfd], ['%d', '$r']], '@p0[tid]', '@p1[tid]');
    this.pair('link', { p0: 'args->oldname', p1: 'args->newname' }, link('0', '-100', '-100'));
    this.pair('linkat', { n0: 'args->olddfd', p0: 'args->oldname', n1: 'args->newdfd', p1: 'args->newname' }, link('0', '@n0[tid]', '@n1[tid]'));
    this.pair('symlink', { p0: 'args->oldname', p1: 'args->newname' }, link('1', '-100', '-100'));
    this.pair('symlinkat', { p0: 'args->oldname', n1: 'args->newdfd', p1: 'args->newname' }, link('1', '-100', '@n1[tid]'));
  }

  private descriptorProbes(): void {
    // Closing the descriptor a waiting fcntl dup made, unwritten and unused by any recorded call: the dup
    // is forgotten. A close prints only the write total, if any.
    this.add(
      'tracepoint:syscalls:sys_enter_close',
      this.cg,
      `$t = nsecs;
  $fd = (int64)args->fd;
  if (@pd[pid].1 == $fd + 1 && @wb[pid, $fd] == 0) { delete(@pd[pid]); }
  if (@wb[pid, $fd]) {${IDENTIFY}
    ${flushWrites('$fd')}
  }`,
    );
    for (const name of ['write', 'pwrite64', 'writev', 'pwritev', 'pwritev2']) {
      this.pair(name, { n0: 'args->fd' }, `if ($r > 0) { @wb[pid, @n0[tid]] += $r; }`, { quiet: true });
    }
    const dup = (oldfd: string) => `if ($r >= 0) {
    ${flushWrites('$r')}
    printf("D %llu %d 0 %d %d\\n", $t, tid, ${oldfd}, $r);
  }`;
    this.pair('dup', { n0: 'args->fildes' }, dup('@n0[tid]'));
    for (const name of ['dup2', 'dup3']) this.pair(name, { n0: 'args->oldfd' }, dup('@n0[tid]'));
    // F_DUPFD (0) and F_DUPFD_CLOEXEC (1030) are the only fcntl commands that make descriptors. Programs
    // such as find dup a descriptor only to fstat and close it, thousands of times: the dup waits (one
    // per process, `@pd`) and is printed before the process's next record, or forgotten if its
    // descriptor is closed first. Each record costs the traced program an interrupt; this halves find's.
    this.pair(
      'fcntl',
      { n0: 'args->fd' },
      `if ($r >= 0) {
    ${flushWrites('$r')}
    @pd[pid] = ((int64)@n0[tid], (int64)$r + 1);
  }`,
      { when: '(args->cmd == 0 || args->cmd == 1030)' },
    );
    const pipe = (socket: string) => `if ($r == 0) {
    $a = *(int32 *)uptr(@p0[tid]);
    $b = *(int32 *)uptr(@p0[tid] + 4);
    ${flushWrites('$a')}
    ${flushWrites('$b')}
    printf("P %llu %d 0 ${socket} %d %d\\n", $t, tid, $a, $b);
  }`;
    for (const name of ['pipe', 'pipe2']) this.pair(name, { p0: 'args->fildes' }, pipe('0'));
    this.pair('socketpair', { p0: 'args->usockvec' }, pipe('1'));
  }

  private networkProbes(): void {
    this.pair(
      'socket',
      { n0: 'args->family', n1: 'args->type', n2: 'args->protocol' },
      `${flushWrites('$r')}
  printf("S %llu %d 0 %d %d %d %d\\n", $t, tid, @n0[tid], @n1[tid], @n2[tid], $r);`,
    );
    this.pair('connect', { n0: 'args->fd', p0: 'args->uservaddr' }, addressRecord(0, '@p0[tid]'));
    this.pair('bind', { n0: 'args->fd', p0: 'args->umyaddr' }, addressRecord(1, '@p0[tid]'));
    this.pair('sendto', { n0: 'args->fd', p0: 'args->addr' }, addressRecord(2, '@p0[tid]'));
    this.pair('sendmsg', { n0: 'args->fd', p0: 'args->msg' }, addressRecord(2, '(@p0[tid] == 0 ? (uint64)0 : *(uint64 *)uptr(@p0[tid]))'));
    this.pair('listen', { n0: 'args->fd' }, `printf("I %llu %d 0 %d %d\\n", $t, tid, @n0[tid], $r);`);
    for (const name of ['accept', 'accept4']) {
      this.pair(
        name,
        { n0: 'args->fd' },
        `${flushWrites('$r')}
  printf("J %llu %d 0 %d %d\\n", $t, tid, @n0[tid], $r);`,
      );
    }
  }

  private memoryProbes(): void {
    this.pair(
      'memfd_create',
      { p0: 'args->uname' },
      `${flushWrites('$r')}
  ${stringRecord('m', '0', [['%d', '$r']], '@p0[tid]')}`,
    );
    // Only executable mappings: PROT_EXEC is 4. Failed mmaps return -errno, which is never a user address.
    this.pair(
      'mmap',
      { n0: 'args->len', n1: 'args->prot', n2: 'args->fd', n3: 'args->flags' },
      `if ($r >= 0 || $r < -4095) {
    printf("x %llu %d 0 0 %llx %d %d %d\\n", $t, tid, $r, @n0[tid], @n1[tid], (@n3[tid] & 0x20) ? -1 : @n2[tid]);
  }`,
      { when: '(args->prot & 4)' },
    );
    this.pair(
      'mprotect',
      { n0: 'args->start', n1: 'args->len', n2: 'args->prot' },
      `if ($r == 0) { printf("x %llu %d 0 1 %llx %d %d -1\\n", $t, tid, @n0[tid], @n1[tid], @n2[tid]); }`,
      { when: '(args->prot & 4)' },
    );
  }

  private privilegeProbes(): void {
    SETID_CALLS.forEach((name, call) => {
      const ids = SETID_ARGS[name]!;
      const saves: Saves = {};
      const slots: Slot[] = ['n0', 'n1', 'n2'];
      ids.forEach((id, i) => (saves[slots[i]!] = `args->${id}`));
      const values = slots.map((slot, i) => (i < ids.length ? `@${slot}[tid]` : '-1'));
      this.pair(name, saves, `printf("u %llu %d 0 ${call} %d %d %d %d\\n", $t, tid, ${values.join(', ')}, $r);`);
    });
  }

  private moduleProbes(): void {
    const missing = MODULE_SYSCALLS.filter((m) => !this.options.hasTracepoint(m.name));
    for (const m of MODULE_SYSCALLS.filter((m) => this.options.hasTracepoint(m.name))) {
      const saves: Saves = m.name === 'delete_module' ? { p0: 'args->name_user' } : m.name === 'finit_module' ? { n0: 'args->fd' } : {};
      const fd = m.name === 'finit_module' ? '@n0[tid]' : '-1';
      const body = m.name === 'delete_module'
        ? stringRecord('k', '0', [['%d', String(m.call)], ['%d', fd], ['%d', '$r']], '@p0[tid]')
        : `printf("k %llu %d 0 ${m.call} %d %d \\n", $t, tid, ${fd}, $r);`;
      this.pair(m.name, saves, body);
    }
    if (missing.length === 0) return;
    // Without module support the calls still exist (they fail with ENOSYS): attempts are seen through
    // raw_syscalls. These probes run on every system call of the host, so the call number, read from
    // the probe's own arguments, is compared before the cgroup, which costs a helper call and a map lookup.
    const ids = missing.map((m) => `args->id == ${m.nr}`).join(' || ');
    const id = this.nextId++;
    this.add(
      'tracepoint:raw_syscalls:sys_enter',
      `(${ids}) && ${this.cg}`,
      `@a[tid] = (${id}, (uint64)args->args[0], (uint64)0, (int64)args->id, (int64)args->args[0], (int64)0, (int64)0);`,
    );
    const call = missing.map((m) => `@n0[tid] == ${m.nr} ? ${m.call} : `).join('') + '-1';
    this.add(
      'tracepoint:raw_syscalls:sys_exit',
      `(${ids}) && ${this.cg} && @a[tid].0 == ${id}`,
      `$t = nsecs; $r = args->ret; $v = @a[tid];${IDENTIFY}
  $call = ${call};
  if ($call == 2) {
    ${stringRecord('k', '0', [['%d', '2'], ['%d', '-1'], ['%d', '$r']], '@p0[tid]')}
  } else {
    printf("k %llu %d 0 %d %d %d \\n", $t, tid, $call, $call == 1 ? (int64)@n1[tid] : -1, $r);
  }`,
    );
  }

  private readonly ids = new Map<string, number>();

  private idOf(syscall: string): number {
    let id = this.ids.get(syscall);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(syscall, id);
    }
    return id;
  }

  /**
   * An entry probe saving the arguments and a return probe printing the record; skipped when the kernel
   * lacks the call. Arguments wait in one map, `@a[tid]` = (call id, p0, p1, n0, n1, n2, n3): one update
   * on entry, one lookup on return. Bodies name them `@p0[tid]`...; the call id tells the return probe
   * that the entry it finds is its own.
   */
  private pair(syscall: string, saves: Saves, exitBody: string, options: { when?: string; quiet?: boolean } = {}): void {
    if (!this.options.hasTracepoint(syscall)) return;
    const id = this.idOf(syscall);
    const tuple = SLOTS.map((slot) => {
      const value = saves[slot];
      const type = slot.startsWith('p') ? 'uint64' : 'int64';
      return value === undefined ? `(${type})0` : `(${type})${value}`;
    });
    // A condition on the call's own arguments is cheaper than the cgroup's lookup, so it goes first.
    const predicate = options.when ? `${options.when} && ${this.cg}` : this.cg;
    this.add(`tracepoint:syscalls:sys_enter_${syscall}`, predicate, `@a[tid] = (${id}, ${tuple.join(', ')});`);
    const prologue = options.quiet ? '$r = args->ret; $v = @a[tid];' : `$t = nsecs; $r = args->ret; $v = @a[tid];${IDENTIFY}`;
    this.add(`tracepoint:syscalls:sys_exit_${syscall}`, `${this.cg} && @a[tid].0 == ${id}`, `${prologue}
  ${exitBody}`);
  }

  private add(probe: string, predicate: string, body: string): void {
    this.probes.push(`${probe} /${predicate}/ {\n  ${slotsToTuple(body)}\n}`);
  }
}

/** A dup waiting in `@pd` (see the fcntl probe) is printed before any other record of its process. */
const FLUSH_PENDING_DUP = `
  if (@pd[pid].1 != 0) { printf("D %llu %d 0 %d %d\\n", $t, tid, @pd[pid].0, @pd[pid].1 - 1); delete(@pd[pid]); }`;

/** Names a thread (`h`) the first time it is seen, then prints what of its process still waits. */
const IDENTIFY = `
  if (@seen[tid] == 0) { @seen[tid] = 1; printf("h %llu %d 0 %d %d %s\\n", $t, tid, pid, curtask->real_parent->tgid, comm); }${FLUSH_PENDING_DUP}`;

/** Reports the bytes written through `fd` so far, before the number is closed or reused. */
function flushWrites(fd: string): string {
  return `if (@wb[pid, ${fd}]) { printf("W %llu %d 0 %d %d %d\\n", $t, tid, pid, ${fd}, @wb[pid, ${fd}]); delete(@wb[pid, ${fd}]); }`;
}

type Field = [format: string, value: string];

/**
 * A record whose tail is the string at `pointer`, with a continuation part when the string fills
 * `str()`'s limit. The limit's last byte is non-zero when the string is that long; for shorter strings
 * it lies past the end, may be anything, and the parser drops the part.
 */
function stringRecord(letter: string, parts: string, fields: Field[], pointer: string): string {
  const formats = fields.map(([f]) => `${f} `).join('');
  const values = fields.map(([, v]) => `, ${v}`).join('');
  return `$p = (uint64)${pointer};
    $more = *(uint8 *)uptr($p + ${STRING_LIMIT - 1}) != 0 ? 1 : 0;
    printf("${letter} %llu %d %d ${formats}%s\\n", $t, tid, ${parts} + $more${values}, str(uptr($p)));
    if ($more) { printf("s %llu %d ${CONTINUATION} %s\\n", $t, tid, str(uptr($p + ${STRING_LIMIT}))); }`;
}

/** A record with two strings: the first as tail, the second as part 1, each with its continuation. */
function twoStringRecord(letter: string, fields: Field[], first: string, second: string): string {
  const formats = fields.map(([f]) => `${f} `).join('');
  const values = fields.map(([, v]) => `, ${v}`).join('');
  return `$p = (uint64)${first};
  $q = (uint64)${second};
  $more = *(uint8 *)uptr($p + ${STRING_LIMIT - 1}) != 0 ? 1 : 0;
  $more2 = *(uint8 *)uptr($q + ${STRING_LIMIT - 1}) != 0 ? 1 : 0;
  printf("${letter} %llu %d %d ${formats}%s\\n", $t, tid, 1 + $more + $more2${values}, str(uptr($p)));
  printf("s %llu %d 1 %s\\n", $t, tid, str(uptr($q)));
  if ($more) { printf("s %llu %d ${CONTINUATION} %s\\n", $t, tid, str(uptr($p + ${STRING_LIMIT}))); }
  if ($more2) { printf("s %llu %d ${CONTINUATION + 1} %s\\n", $t, tid, str(uptr($q + ${STRING_LIMIT}))); }`;
}

/**
 * connect/bind/send: the first 32 bytes of the socket address as four little-endian words (enough for
 * IPv4 and IPv6), and for unix sockets the path as tail. A null address prints zero words.
 */
function addressRecord(call: number, pointer: string): string {
  return `$a = (uint64)${pointer};
  $w0 = $a == 0 ? (uint64)0 : *(uint64 *)uptr($a);
  if (($w0 & 0xffff) == 1) {
    printf("Y %llu %d 0 ${call} %d %d %llx %llx %llx %llx %s\\n", $t, tid, @n0[tid], $r, $w0, *(uint64 *)uptr($a + 8), *(uint64 *)uptr($a + 16), *(uint64 *)uptr($a + 24), str(uptr($a + 2)));
  } else {
    printf("Y %llu %d 0 ${call} %d %d %llx %llx %llx %llx \\n", $t, tid, @n0[tid], $r, $w0, $a == 0 ? (uint64)0 : *(uint64 *)uptr($a + 8), $a == 0 ? (uint64)0 : *(uint64 *)uptr($a + 16), $a == 0 ? (uint64)0 : *(uint64 *)uptr($a + 24));
  }`;
}
