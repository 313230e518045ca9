import { useEffect, useMemo, useState } from 'preact/hooks';
import { formatAge, nodeState, type NodeStatus } from '../../../src/api/node-status';

const STATE_BADGE = { live: 'badge-good', down: 'badge-bad', disabled: 'badge-idle' } as const;

/** The cluster's nodes, as `nestbox status` lists them: role, state, heartbeat age, machines, running tasks. */
export function NodeTable({ nodes }: { nodes: NodeStatus[] }) {
  const since = useSecondsSince(nodes);
  if (nodes.length === 0) return <p class="muted">No node has registered.</p>;
  return (
    <table class="dense" id="nodes">
      <thead>
        <tr>
          <th>Node</th>
          <th>Role</th>
          <th>State</th>
          <th>Heartbeat</th>
          <th>Machines free</th>
          <th>Running tasks</th>
        </tr>
      </thead>
      <tbody>
        {nodes.map((node) => (
          <tr key={node.name} data-node={node.name}>
            <td>{node.name}</td>
            <td>{node.role}</td>
            <td>
              <span class={`badge ${STATE_BADGE[nodeState(node)]}`}>{nodeState(node)}</span>
            </td>
            <td title={node.heartbeat_on ?? undefined}>{node.heartbeat_age === null ? '–' : `${formatAge(node.heartbeat_age + since)} ago`}</td>
            <td class="num">
              {node.machines.available} / {node.machines.total}
            </td>
            <td class="num">{node.tasks.running}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Whole seconds since `value` last changed, counted every second: the server sends the dashboard again
 * only when data change, and a silent node's heartbeat keeps getting older in between.
 */
function useSecondsSince(value: unknown): number {
  const received = useMemo(() => Date.now(), [value]);
  const [now, setNow] = useState(received);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  return Math.max(0, Math.floor((now - received) / 1000));
}
