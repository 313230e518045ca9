/**
 * The analysis of one task (/ui/analysis/:id): its overview, signatures and ATT&CK matrix, processes and
 * calls, network, files, static analysis, strings, screenshots and memory, in tabs. While the task runs
 * it shows the live process tree and events instead, and the report once the task is reported.
 * Everything from the report is shown as text: it comes from the sample.
 */
import { DroppedFiles } from '../analysis/dropped-files';
import { LiveView } from '../analysis/live-view';
import { MemoryDumps } from '../analysis/memory-dumps';
import { Network } from '../analysis/network';
import { Overview } from '../analysis/overview';
import { ProcessesSection } from '../analysis/processes-section';
import { isFinished, type Report, type TaskView } from '../analysis/report';
import { Screenshots } from '../analysis/screenshots';
import { Signatures } from '../analysis/signatures';
import { StaticAnalysis } from '../analysis/static-analysis';
import { StringsList } from '../analysis/strings-list';
import { type Tab, TabBar, useTab } from '../analysis/tabs';
import { useAnalysis, usePolling } from '../analysis/use-analysis';
import { useLiveTask } from '../analysis/use-live-task';
import '../analysis/analysis.css';

export function AnalysisPage({ id }: { id?: string }) {
  const taskId = Number(id);
  if (!Number.isSafeInteger(taskId) || taskId < 1) return <p class="error">No such task.</p>;
  return <Analysis key={taskId} id={taskId} />;
}

function Analysis({ id }: { id: number }) {
  const { analysis, reload } = useAnalysis(id);
  const running = analysis.state === 'ready' && !isFinished(analysis.task.status);
  const live = useLiveTask(id, running, reload);
  usePolling(running && live.failed, reload);

  if (analysis.state === 'loading') return <p class="muted">Loading task {id}…</p>;
  if (analysis.state === 'missing') return <p class="error">Task {id}: {analysis.message}</p>;
  if (analysis.state === 'failed') return <p class="error">{analysis.message}</p>;
  const { task, report } = analysis;
  return (
    <div class="analysis">
      <h1>
        Analysis {id} <span class="muted target-title">{task.target.split('/').pop()}</span>
      </h1>
      {running ? <RunningTask task={task} live={live} /> : <FinishedTask task={task} report={report} />}
    </div>
  );
}

const RUNNING_TABS: Tab[] = [
  { key: 'live', label: 'Live' },
  { key: 'overview', label: 'Overview' },
];

function RunningTask({ task, live }: { task: TaskView; live: ReturnType<typeof useLiveTask> }) {
  const [open, choose] = useTab(RUNNING_TABS);
  return (
    <>
      <TabBar tabs={RUNNING_TABS} open={open} onOpen={choose} />
      {open === 'live' ? live.failed ? <p class="muted">The task is {task.status}; this page shows its report when it is done.</p> : <LiveView live={live} /> : <Overview task={task} report={null} />}
    </>
  );
}

const REPORT_TABS: Tab[] = [
  { key: 'overview', label: 'Overview' },
  { key: 'signatures', label: 'Signatures' },
  { key: 'behaviour', label: 'Processes & behaviour' },
  { key: 'network', label: 'Network' },
  { key: 'dropped', label: 'Dropped files' },
  { key: 'static', label: 'Static analysis' },
  { key: 'strings', label: 'Strings' },
  { key: 'screenshots', label: 'Screenshots' },
  { key: 'memory', label: 'Memory' },
];

function FinishedTask({ task, report }: { task: TaskView; report: Report | null }) {
  const [open, choose] = useTab(report ? REPORT_TABS : REPORT_TABS.slice(0, 1));
  if (!report) return <Overview task={task} report={null} />;
  return (
    <>
      <TabBar tabs={REPORT_TABS} open={open} onOpen={choose} />
      <TabContent open={open} task={task} report={report} />
    </>
  );
}

function TabContent({ open, task, report }: { open: string; task: TaskView; report: Report }) {
  switch (open) {
    case 'signatures':
      return <Signatures signatures={report.signatures ?? []} />;
    case 'behaviour':
      return <ProcessesSection id={task.id} />;
    case 'network':
      return <Network id={task.id} network={report.network} />;
    case 'dropped':
      return <DroppedFiles id={task.id} dropped={report.dropped} />;
    case 'static':
      return <StaticAnalysis report={report} />;
    case 'strings':
      return <StringsList strings={report.strings} />;
    case 'screenshots':
      return <Screenshots id={task.id} />;
    case 'memory':
      return <MemoryDumps id={task.id} />;
    default:
      return <Overview task={task} report={report} />;
  }
}
