import type { BehaviorSection, ProcessTreeNode } from '../report/report-types.js';
import { html, type SafeHtml } from './html-escape.js';
import { code, more, section, table, time } from './html-parts.js';

/** Nodes drawn in the process tree, and how deep; a fork bomb must not produce a page nobody can open. */
const MAX_TREE_NODES = 2000;
const MAX_TREE_DEPTH = 40;
const MAX_VALUES = 500;

export function processTree(behavior: BehaviorSection | undefined): SafeHtml {
  const roots = behavior?.processtree ?? [];
  const budget = { left: MAX_TREE_NODES };
  const body = roots.length === 0 ? html`<p class="empty">No processes were recorded.</p>` : html`<ul class="tree">${roots.map((node) => treeNode(node, 0, budget))}</ul>`;
  const total = countNodes(roots);
  return section('processes', 'Process tree', html`${body}${more(total, MAX_TREE_NODES - budget.left)}`, total);
}

function treeNode(node: ProcessTreeNode, depth: number, budget: { left: number }): SafeHtml {
  if (budget.left <= 0) return html``;
  budget.left--;
  const children = depth + 1 < MAX_TREE_DEPTH ? node.children ?? [] : [];
  return html`<li><span class="pid">${node.pid}</span> <strong>${node.process_name}</strong> ${code(node.command_line, 1000)}${
    children.length > 0 ? html`<ul>${children.map((child) => treeNode(child, depth + 1, budget))}</ul>` : ''
  }</li>`;
}

function countNodes(nodes: readonly ProcessTreeNode[]): number {
  let count = 0;
  const stack = [...nodes];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node) break;
    count++;
    stack.push(...(node.children ?? []));
  }
  return count;
}

export function behaviorSummary(behavior: BehaviorSection | undefined): SafeHtml {
  const summary = behavior?.summary ?? {};
  const categories = Object.entries(summary).filter(([, values]) => Array.isArray(values) && values.length > 0);
  const processes = behavior?.processes ?? [];
  const body = html`${table(
    ['PID', 'Parent', 'Name', 'Path', 'Command line', 'First seen', 'Calls'],
    processes.map((process) => [
      process.pid,
      process.ppid,
      process.process_name,
      code(process.process_path, 500),
      code(process.command_line, 1000),
      time(process.first_seen),
      process.calls?.length ?? 0,
    ]),
  )}${
    categories.length === 0
      ? html`<p class="empty">Nothing was summarised.</p>`
      : categories.map(
          ([category, values]) =>
            html`<details class="category"><summary>${category.replace(/_/g, ' ')} <span class="count">${values.length}</span></summary><ul class="values">${values
              .slice(0, MAX_VALUES)
              .map((value) => html`<li>${code(String(value), 1000)}</li>`)}</ul>${more(values.length, Math.min(values.length, MAX_VALUES))}</details>`,
        )
  }${anomalies(behavior)}`;
  return section('behavior', 'Behaviour', body);
}

function anomalies(behavior: BehaviorSection | undefined): SafeHtml {
  const list = behavior?.anomaly ?? [];
  return list.length === 0 ? html`` : html`<h3>Anomalies</h3>${table(['Category', 'Function', 'Message'], list.map((item) => [item.category, item.funcname, item.message]))}`;
}
