/**
 * The seccomp filter of the sample's sandbox, as a classic BPF program bubblewrap loads with `--seccomp`.
 *
 * It denies (EPERM) the system calls that matter for escaping or attacking the kernel from a namespace
 * sandbox: mounting and namespace changes, new user namespaces, kernel keyrings, eBPF and perf,
 * io_uring, userfaultfd, handle-based opens, kexec, swap, raw I/O ports, TIOCSTI. Everything else stays
 * allowed on purpose, `ptrace`, `init_module`/`finit_module` and `memfd_create` included, so samples
 * behave as they would on a real machine and the tracer sees what they try (loading a module fails
 * anyway: the sandbox holds no capability). 32-bit x86 calls are filtered with their own numbers;
 * x32 calls and other architectures are refused.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_I386 = 0x40000003;
const X32_SYSCALL_BIT = 0x40000000;
const CLONE_NEWUSER = 0x10000000;
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const EPERM = 1;
const ENOSYS = 38;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

/** Offsets in struct seccomp_data (little-endian: an argument's low word comes first). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const offsetArg = (index: number) => 16 + 8 * index;

interface ArchTable {
  arch: number;
  /** Calls answered with EPERM. */
  denied: Record<string, number>;
  clone: number;
  clone3: number;
  ioctl: number;
  /** Refuse numbers at or above this (the x32 ABI on x86-64). */
  ceiling?: number;
}

export const X86_64: ArchTable = {
  arch: AUDIT_ARCH_X86_64,
  denied: {
    mount: 165, umount2: 166, pivot_root: 155, swapon: 167, swapoff: 168, reboot: 169, kexec_load: 246,
    kexec_file_load: 320, delete_module: 176, acct: 163, quotactl: 179, iopl: 172, ioperm: 173, syslog: 103,
    keyctl: 250, add_key: 248, request_key: 249, bpf: 321, perf_event_open: 298, userfaultfd: 323,
    open_by_handle_at: 304, name_to_handle_at: 303, setns: 308, unshare: 272, lookup_dcookie: 212, uselib: 134,
    nfsservctl: 180, vhangup: 153, _sysctl: 156, create_module: 174, get_kernel_syms: 177, query_module: 178,
    io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, open_tree: 428, move_mount: 429, fsopen: 430,
    fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442, quotactl_fd: 443,
  },
  clone: 56,
  clone3: 435,
  ioctl: 16,
  ceiling: X32_SYSCALL_BIT,
};

export const I386: ArchTable = {
  arch: AUDIT_ARCH_I386,
  denied: {
    mount: 21, umount: 22, umount2: 52, pivot_root: 217, swapon: 87, swapoff: 115, reboot: 88, kexec_load: 283,
    delete_module: 129, acct: 51, quotactl: 131, iopl: 110, ioperm: 101, syslog: 103, keyctl: 288, add_key: 286,
    request_key: 287, bpf: 357, perf_event_open: 336, userfaultfd: 374, open_by_handle_at: 342, name_to_handle_at: 341,
    setns: 346, unshare: 310, lookup_dcookie: 253, uselib: 86, nfsservctl: 169, vhangup: 111, _sysctl: 149,
    create_module: 127, get_kernel_syms: 130, query_module: 167, vm86old: 113, vm86: 166, io_uring_setup: 425,
    io_uring_enter: 426, io_uring_register: 427, open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431,
    fsmount: 432, fspick: 433, mount_setattr: 442, quotactl_fd: 443,
  },
  clone: 120,
  clone3: 435,
  ioctl: 54,
};

/** Names of the denied calls, for documentation and tests. */
export const DENIED_SYSCALLS: readonly string[] = Object.keys(X86_64.denied);

type Target = number | string;
interface Instruction {
  code: number;
  jt: Target;
  jf: Target;
  k: number;
}

/** A tiny assembler: jumps name labels and are resolved to forward offsets at the end. */
class Program {
  private readonly code: Instruction[] = [];
  private readonly labels = new Map<string, number>();

  label(name: string): this {
    this.labels.set(name, this.code.length);
    return this;
  }

  load(offset: number): this {
    return this.push(LD_W_ABS, 0, 0, offset);
  }

  jumpIf(code: number, k: number, target: string): this {
    return this.push(code, target, 0, k);
  }

  ret(value: number): this {
    return this.push(RET_K, 0, 0, value);
  }

  assemble(): Buffer {
    const buffer = Buffer.alloc(this.code.length * 8);
    this.code.forEach((instruction, index) => {
      buffer.writeUInt16LE(instruction.code, index * 8);
      buffer.writeUInt8(this.offset(instruction.jt, index), index * 8 + 2);
      buffer.writeUInt8(this.offset(instruction.jf, index), index * 8 + 3);
      buffer.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
    });
    return buffer;
  }

  private push(code: number, jt: Target, jf: Target, k: number): this {
    this.code.push({ code, jt, jf, k });
    return this;
  }

  private offset(target: Target, index: number): number {
    if (typeof target === 'number') return target;
    const at = this.labels.get(target);
    if (at === undefined) throw new Error(`seccomp: unknown label ${target}`);
    const offset = at - index - 1;
    if (offset < 0 || offset > 255) throw new Error(`seccomp: jump to ${target} out of range`);
    return offset;
  }
}

function archBlock(program: Program, table: ArchTable, prefix: string): void {
  const deny = `${prefix}.eperm`;
  program.load(OFFSET_NR);
  if (table.ceiling !== undefined) program.jumpIf(JGE_K, table.ceiling, deny);
  for (const nr of Object.values(table.denied)) program.jumpIf(JEQ_K, nr, deny);
  program
    .jumpIf(JEQ_K, table.clone3, `${prefix}.enosys`)
    .jumpIf(JEQ_K, table.ioctl, `${prefix}.ioctl`)
    .jumpIf(JEQ_K, table.clone, `${prefix}.clone`)
    .ret(RET_ALLOW)
    .label(`${prefix}.ioctl`)
    .load(offsetArg(1))
    .jumpIf(JEQ_K, TIOCSTI, deny)
    .jumpIf(JEQ_K, TIOCLINUX, deny)
    .ret(RET_ALLOW)
    .label(`${prefix}.clone`)
    .load(offsetArg(0))
    .jumpIf(JSET_K, CLONE_NEWUSER, deny)
    .ret(RET_ALLOW)
    .label(deny)
    .ret(RET_ERRNO | EPERM)
    // clone3 passes its flags in memory the filter cannot read: say it does not exist, libc falls back to clone.
    .label(`${prefix}.enosys`)
    .ret(RET_ERRNO | ENOSYS);
}

/** The filter as the raw `struct sock_filter[]` bytes bubblewrap reads from a file descriptor. */
export function sandboxSeccompProgram(): Buffer {
  const program = new Program();
  program.load(OFFSET_ARCH).jumpIf(JEQ_K, AUDIT_ARCH_X86_64, 'x86_64');
  program.load(OFFSET_ARCH).jumpIf(JEQ_K, AUDIT_ARCH_I386, 'i386').ret(RET_KILL_PROCESS);
  archBlock(program.label('x86_64'), X86_64, 'x86_64');
  archBlock(program.label('i386'), I386, 'i386');
  return program.assemble();
}
