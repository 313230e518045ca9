import { StateBadge } from '../components/badges';
import { formatBytes } from '../components/format';
import { analysisHref } from '../components/links';
import { TaskTable } from '../components/task-table';
import { type Dashboard, type Liveness, useLiveDashboard } from '../dashboard/live-dashboard';
import { NodeTable } from '../dashboard/node-table';
import './pages.css';

const LIVENESS: Record<Liveness, string> = {
  connecting: 'connecting…',
  live: 'live',
  polling: 'refreshing every 5 s',
};

/** What the service is doing: queue, machines, host resources and the latest analyses, kept current. */
export function DashboardPage() {
  const { dashboard, error, liveness } = useLiveDashboard();
  return (
    <>
      <div class="page-head">
        <h1>Dashboard</h1>
        <span class={`liveness liveness-${liveness}`}>{LIVENESS[liveness]}</span>
      </div>
      {error && <p class="error">{error}</p>}
      {dashboard ? <DashboardBody dashboard={dashboard} /> : !error && <p class="muted">Loading…</p>}
    </>
  );
}

function DashboardBody({ dashboard }: { dashboard: Dashboard }) {
  return (
    <>
      <div class="cards">
        <TaskCounts counts={dashboard.tasksByState} total={dashboard.status.tasks.total ?? 0} />
        <HostCard status={dashboard.status} />
        <DiskCard disks={dashboard.status.diskspace} />
      </div>
      <section>
        <h2>Nodes</h2>
        <NodeTable nodes={Object.values(dashboard.status.nodes ?? {})} />
      </section>
      <section>
        <h2>Machines</h2>
        <MachineTable machines={dashboard.machines} />
      </section>
      <section>
        <h2>
          Recent analyses <a class="small" href="/ui/tasks">all tasks</a>
        </h2>
        {dashboard.recent.length === 0 ? <p class="muted">No task yet. <a href="/ui/submit">Submit one</a>.</p> : <TaskTable tasks={dashboard.recent} />}
      </section>
    </>
  );
}

function TaskCounts({ counts, total }: { counts: Record<string, number>; total: number }) {
  return (
    <section class="card" id="tasks-by-state">
      <h2>Tasks</h2>
      <table class="dense">
        <tbody>
          {Object.entries(counts).map(([state, count]) => (
            <tr key={state} data-state={state}>
              <td>
                <a href={`/ui/tasks?state=${encodeURIComponent(state)}`}>
                  <StateBadge state={state} />
                </a>
              </td>
              <td class="num">{count}</td>
            </tr>
          ))}
          <tr>
            <td>total</td>
            <td class="num" data-total>
              {total}
            </td>
          </tr>
        </tbody>
      </table>
    </section>
  );
}

function HostCard({ status }: { status: Dashboard['status'] }) {
  const load = status.cpuload.map((value) => value.toFixed(2)).join(' / ');
  return (
    <section class="card">
      <h2>Host</h2>
      <dl class="facts">
        <dt>Host name</dt>
        <dd>{status.hostname}</dd>
        <dt>Version</dt>
        <dd>{status.nestbox_version ?? status.version}</dd>
        <dt>Load (1/5/15 min)</dt>
        <dd>
          {load}
          {status.cpu_count ? <span class="muted"> on {status.cpu_count} CPUs</span> : null}
        </dd>
        <dt>Memory used</dt>
        <dd>{status.memory === null ? '–' : `${status.memory.toFixed(0)} % of ${formatBytes((status.memtotal ?? 0) * 1024)}`}</dd>
        <dt>Machines free (live nodes)</dt>
        <dd>
          {status.machines.available} of {status.machines.total}
        </dd>
      </dl>
    </section>
  );
}

function DiskCard({ disks }: { disks: Record<string, { total: number; free: number; used: number }> }) {
  return (
    <section class="card">
      <h2>Disk space</h2>
      <table class="dense">
        <tbody>
          {Object.entries(disks).map(([name, disk]) => (
            <tr key={name}>
              <td>{name}</td>
              <td class="num">{formatBytes(disk.free)} free</td>
              <td class="meter-cell">
                <meter min={0} max={disk.total} value={disk.used} high={disk.total * 0.9} title={`${formatBytes(disk.used)} of ${formatBytes(disk.total)} used`} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function MachineTable({ machines }: { machines: Dashboard['machines'] }) {
  if (machines.length === 0) return <p class="muted">No machine is configured.</p>;
  return (
    <table class="dense" id="machines">
      <thead>
        <tr>
          <th>Name</th>
          <th>Label</th>
          <th>Node</th>
          <th>Platform</th>
          <th>Lock</th>
          <th>Status</th>
          <th>Current task</th>
        </tr>
      </thead>
      <tbody>
        {machines.map((machine) => (
          <tr key={machine.name}>
            <td>{machine.name}</td>
            <td>{machine.label}</td>
            <td>{machine.node || '–'}</td>
            <td>{machine.platform}</td>
            <td>{machine.locked ? <span class="badge badge-busy">locked</span> : <span class="badge badge-good">free</span>}</td>
            <td>{machine.status ?? '–'}</td>
            <td>{machine.task === null ? '–' : <a href={analysisHref(machine.task)}>#{machine.task}</a>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
