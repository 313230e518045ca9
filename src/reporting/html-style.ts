/** The report page's style sheet, inlined so the page needs nothing but itself. */
export const STYLE = `
:root { --fg: #1d2433; --muted: #5f6b7a; --line: #d9dee5; --bg: #f6f7f9; --card: #fff;
  --sev1: #5b7083; --sev2: #b58105; --sev3: #d9480f; --sev4: #c92a2a; --sev5: #7a0f0f; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; justify-content: space-between; align-items: center; gap: 16px; padding: 20px 28px; background: #1d2433; color: #fff; }
header h1 { margin: 0; font-size: 22px; }
header .target { margin: 4px 0 0; opacity: .85; word-break: break-all; }
header .target code { background: none; color: inherit; }
.score { min-width: 96px; text-align: center; border-radius: 10px; padding: 8px 14px; font-weight: 700; }
.score span { font-size: 32px; } .score small { display: block; font-weight: 400; opacity: .8; }
.score.low { background: #2b8a3e; } .score.medium { background: #b58105; } .score.high { background: #d9480f; } .score.critical { background: #c92a2a; }
nav { position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; gap: 4px 16px; padding: 8px 28px; background: #fff; border-bottom: 1px solid var(--line); }
nav a { color: #1c5fb8; text-decoration: none; }
main { padding: 8px 28px 40px; max-width: 1400px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 18px; margin: 16px 0; }
h2 { margin: 4px 0 12px; font-size: 18px; } h3 { margin: 16px 0 6px; font-size: 15px; }
.count { display: inline-block; min-width: 22px; padding: 0 7px; border-radius: 11px; background: var(--bg); border: 1px solid var(--line); font-size: 12px; font-weight: 600; text-align: center; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 16px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--line); }
thead th { background: var(--bg); font-weight: 600; }
table.facts th { width: 140px; color: var(--muted); font-weight: 500; }
.scroll { overflow-x: auto; }
code, pre { font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; background: #f1f3f5; border-radius: 3px; padding: 0 3px; white-space: pre-wrap; word-break: break-all; }
pre.strings { padding: 8px; max-height: 480px; overflow: auto; }
.empty, .more, .note { color: var(--muted); } .more { font-style: italic; }
.warn { color: var(--sev4); }
details.signature { border-left: 5px solid var(--sev1); margin: 8px 0; padding: 6px 10px; background: #fafbfc; border-radius: 4px; }
details.signature > summary { cursor: pointer; }
details.sev2 { border-color: var(--sev2); } details.sev3 { border-color: var(--sev3); } details.sev4 { border-color: var(--sev4); } details.sev5 { border-color: var(--sev5); }
.severity { display: inline-block; padding: 0 8px; border-radius: 10px; color: #fff; font-size: 12px; font-weight: 600; text-transform: uppercase; background: var(--sev1); }
.sev2 .severity { background: var(--sev2); } .sev3 .severity { background: var(--sev3); } .sev4 .severity { background: var(--sev4); } .sev5 .severity { background: var(--sev5); }
.description { font-weight: 600; }
code.name { color: var(--muted); background: none; }
.ttp { display: inline-block; margin-left: 4px; padding: 0 6px; border: 1px solid var(--line); border-radius: 4px; font-size: 12px; color: var(--muted); }
ol.marks { margin: 6px 0 0; padding-left: 24px; }
.kind { display: inline-block; min-width: 48px; color: var(--muted); font-size: 12px; }
ul.tree, ul.tree ul { list-style: none; padding-left: 18px; margin: 0; border-left: 1px dashed var(--line); }
ul.tree { border: 0; padding: 0; } ul.tree li { margin: 3px 0; }
.pid { display: inline-block; min-width: 54px; color: var(--muted); font-variant-numeric: tabular-nums; }
ul.values { margin: 4px 0; padding-left: 20px; }
details.category { margin: 4px 0; } details.category > summary { cursor: pointer; text-transform: capitalize; }
.shots { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 12px; }
.shots figure { margin: 0; } .shots img { width: 100%; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 12px; }
footer { padding: 0 28px 24px; color: var(--muted); font-size: 12px; }
`;
