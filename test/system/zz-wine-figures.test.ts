import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { analyseSample } from '../helpers/sample-through-api.js';
import { startTestServer } from '../helpers/server.js';
import { windowsSample, type WindowsSampleName } from '../helpers/windows-samples.js';

it('figures', { timeout: 30 * 60_000 }, async () => {
  const server = await startTestServer({}, { engine: true, pollMs: 200 });
  try {
    const samples: Array<[WindowsSampleName, string, Record<string, string>]> = [
      ['evade-wine', 'evade.exe', {}], ['inject', 'inject.exe', {}],
    ];
    for (const [name, file, fields] of samples) {
      const report: any = await analyseSample(server, file, readFileSync(windowsSample(name, 64)), { timeout: '30', ...fields }, 10 * 60_000);
      const { cpSync } = await import('node:fs');
      cpSync(report.taskDir, `/tmp/wine-task-${name}`, { recursive: true });
      console.log(JSON.stringify({
        name, score: report.info.score, type: report.target?.file?.type,
        sigs: (report.signatures ?? []).map((s: any) => `${s.name}: ${s.description}`),
        dns: (report.network?.dns ?? []).map((d: any) => d.request), http: (report.network?.http ?? []).map((h: any) => h.uri),
        success: (report.debug?.cuckoo ?? []).some((l: string) => l.includes('analysis completed successfully')),
        shots: (report.screenshots ?? []).length, procs: report.behavior?.processes?.map((p: any) => `${p.pid}:${p.process_name}:${p.calls?.length}`),
        summaryKeys: Object.keys(report.behavior?.summary ?? {}),
      }));
    }
  } finally {
    await server.close();
  }
});
