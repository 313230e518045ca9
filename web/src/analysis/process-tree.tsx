/**
 * The processes as a tree built from pid and ppid: branches open and close, and choosing a process
 * selects it (the behaviour section then lists its calls). A process whose parent was not seen is a root.
 */
import { useMemo, useState } from 'preact/hooks';
import { asText } from './format';
import { usePage } from './pager';
import type { ProcessRow } from './report';

interface Node {
  process: ProcessRow;
  children: Node[];
}

export function ProcessTree({ processes, selected, onSelect }: { processes: ProcessRow[]; selected: number | null; onSelect: (pid: number | null) => void }) {
  const roots = useMemo(() => treeOf(processes), [processes]);
  const [closed, setClosed] = useState<ReadonlySet<number>>(new Set());
  const { rows, pager } = usePage(roots, 50);
  const toggle = (pid: number) => {
    const next = new Set(closed);
    if (!next.delete(pid)) next.add(pid);
    setClosed(next);
  };
  if (processes.length === 0) return <p class="muted">No process seen yet.</p>;
  return (
    <div class="process-tree">
      <button type="button" class={selected === null ? 'all selected' : 'all'} onClick={() => onSelect(null)}>
        All processes ({processes.length})
      </button>
      <ul class="tree">
        {rows.map((node) => (
          <Branch key={node.process.pid} node={node} closed={closed} toggle={toggle} selected={selected} onSelect={onSelect} />
        ))}
      </ul>
      {pager}
    </div>
  );
}

function Branch({ node, closed, toggle, selected, onSelect }: { node: Node; closed: ReadonlySet<number>; toggle: (pid: number) => void; selected: number | null; onSelect: (pid: number | null) => void }) {
  const { process, children } = node;
  const open = !closed.has(process.pid);
  return (
    <li>
      <div class={selected === process.pid ? 'process selected' : 'process'} data-pid={process.pid}>
        {children.length > 0 ? (
          <button type="button" class="toggle" aria-expanded={open} aria-label={open ? 'collapse' : 'expand'} onClick={() => toggle(process.pid)}>
            {open ? '▾' : '▸'}
          </button>
        ) : (
          <span class="toggle" />
        )}
        <button type="button" class="process-select" onClick={() => onSelect(process.pid)}>
          <span class="process-name">{asText(process.name)}</span>
          <span class="muted"> pid {process.pid}</span>
          {process.calls !== undefined ? <span class="muted"> · {process.calls} calls</span> : null}
        </button>
        <div class="command-line mono">{asText(process.command_line)}</div>
      </div>
      {open && children.length > 0 ? (
        <ul>
          {children.map((child) => (
            <Branch key={child.process.pid} node={child} closed={closed} toggle={toggle} selected={selected} onSelect={onSelect} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** The roots of the process forest, children in the order they were first seen. */
export function treeOf(processes: ProcessRow[]): Node[] {
  const nodes = new Map<number, Node>();
  for (const process of [...processes].sort((a, b) => a.first_seen - b.first_seen)) {
    if (!nodes.has(process.pid)) nodes.set(process.pid, { process, children: [] });
  }
  const roots: Node[] = [];
  for (const node of nodes.values()) {
    const parent = nodes.get(node.process.ppid);
    // A parent that descends from its own child (pid reuse) would loop: such a node is a root.
    if (parent && parent !== node && !descendsFrom(parent, node, nodes)) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

function descendsFrom(node: Node, ancestor: Node, nodes: Map<number, Node>): boolean {
  const seen = new Set<number>();
  for (let current: Node | undefined = node; current && !seen.has(current.process.pid); current = nodes.get(current.process.ppid)) {
    if (current === ancestor) return true;
    seen.add(current.process.pid);
  }
  return false;
}
