import { formatAge, nodeState, type NodeStatus } from '../api/node-status.js';

/** The parts of /cuckoo/status that `nestbox status` prints. */
export interface StatusAnswer {
  hostname: string;
  version: string;
  nestbox_version?: string;
  machines: { available: number; total: number };
  tasks: Record<string, number>;
  nodes?: Record<string, NodeStatus>;
}

const COLUMNS = ['NODE', 'ROLE', 'STATE', 'HEARTBEAT', 'MACHINES', 'RUNNING'] as const;

/** The cluster's status as text: its tasks and machines, then one line per node. */
export function statusText(status: StatusAnswer): string {
  const tasks = ['pending', 'running', 'completed', 'reported'].map((state) => `${state} ${status.tasks[state] ?? 0}`).join(', ');
  const lines = [
    `nestbox ${status.nestbox_version ?? status.version} answering on ${status.hostname}`,
    `tasks: ${tasks} (total ${status.tasks.total ?? 0})`,
    `machines: ${status.machines.available} free of ${status.machines.total} (live nodes)`,
    '',
    ...table(Object.values(status.nodes ?? {}).map(nodeCells)),
  ];
  return `${lines.join('\n')}\n`;
}

function nodeCells(node: NodeStatus): string[] {
  const heartbeat = node.heartbeat_age === null ? '-' : `${formatAge(node.heartbeat_age)} ago`;
  return [node.name, node.role, nodeState(node), heartbeat, `${node.machines.available}/${node.machines.total} free`, String(node.tasks.running)];
}

function table(rows: string[][]): string[] {
  const all = [[...COLUMNS], ...rows];
  const widths = COLUMNS.map((_, column) => Math.max(...all.map((row) => row[column]!.length)));
  return all.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
}
